"""`Reads`: library reads run off the GUI thread and come back on it, the newest of a key only."""

from __future__ import annotations

import threading

from egodesk.gui.reads import Reads


def test_a_read_runs_off_the_gui_thread_and_answers_on_it(qtbot):
    reads = Reads()
    ran_on, answered_on, got = [], [], []

    def read():
        ran_on.append(threading.current_thread())
        return 42

    def on_result(value):
        answered_on.append(threading.current_thread())
        got.append(value)

    reads.read("answer", read, on_result, lambda exc: None)
    qtbot.waitUntil(lambda: reads.idle)
    assert got == [42]
    assert ran_on[0] is not threading.main_thread() and answered_on[0] is threading.main_thread()
    reads.close()


def test_only_the_newest_read_of_a_key_is_shown(qtbot):
    reads = Reads()
    gate, shown = threading.Event(), []
    reads.read("moment", lambda: gate.wait(5) and "old", shown.append, lambda exc: None)
    reads.read("moment", lambda: "new", shown.append, lambda exc: None)
    reads.read("clips", lambda: "clips", shown.append, lambda exc: None)
    gate.set()
    qtbot.waitUntil(lambda: reads.idle)
    assert shown == ["new", "clips"]  # the older read of "moment" finished after it was superseded
    reads.close()


def test_a_failed_read_reaches_its_error_handler(qtbot):
    reads = Reads()
    errors = []

    def broken():
        raise OSError("disk gone")

    reads.read("footage", broken, lambda value: errors.append("no error"), errors.append)
    qtbot.waitUntil(lambda: reads.idle)
    assert [str(e) for e in errors] == ["disk gone"]
    reads.close()


def test_after_close_nothing_is_read(qtbot):
    reads = Reads()
    reads.close()
    ran = []
    reads.read("footage", lambda: ran.append("read"), ran.append, ran.append)
    qtbot.wait(50)
    assert ran == [] and reads.idle
