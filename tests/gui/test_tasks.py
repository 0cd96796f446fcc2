"""The task runner: ops run in a worker process; progress streams back; failures, crashes and cancels
arrive as messages; the GUI thread never stalls while a worker burns a CPU."""

from __future__ import annotations

import time

import pytest

from egodesk.gui.stall import StallMeter
from egodesk.gui.tasks import TaskRunner
from tests.gui import task_ops

WAIT_MS = 20_000


@pytest.fixture
def runner(qtbot):
    runner = TaskRunner()
    yield runner
    runner.cancel_all()


def outcome(task) -> dict:
    seen: dict = {"progress": []}
    task.progressed.connect(seen["progress"].append)
    task.succeeded.connect(lambda value: seen.setdefault("result", value))
    task.failed.connect(lambda message: seen.setdefault("error", message))
    task.cancelled.connect(lambda message: seen.setdefault("cancelled", message))
    return seen


def test_a_partial_result_arrives_before_the_end(qtbot, runner):
    task = runner.run(task_ops.halfway, "registered", label="halfway")
    order = []
    task.partial.connect(lambda v: order.append(("partial", v)))
    task.succeeded.connect(lambda v: order.append(("result", v)))
    finish(qtbot, task)
    assert order == [("partial", "registered"), ("result", "registered and done")]


def test_what_an_op_changes_is_announced_as_it_goes_and_when_it_ends(qtbot, runner):
    heard = []
    runner.changed.connect(heard.append)
    finish(qtbot, runner.run(task_ops.count_changing_footage, 2, label="change"))
    assert heard == [frozenset({"footage"})] * 3  # at each of its two progress events and at its end
    finish(qtbot, runner.run(task_ops.count, 2, label="count"))
    assert len(heard) == 3  # an op that changes nothing announces nothing


def test_result_and_progress_come_back_in_order(qtbot, runner):
    task = runner.run(task_ops.count, 4, label="count")
    seen = outcome(task)
    with qtbot.waitSignal(task.finished, timeout=WAIT_MS):
        pass
    assert seen["result"] == 40
    assert [(p.stage, p.done, p.total) for p in seen["progress"]] == [("count", i, 4) for i in range(1, 5)]
    assert task.state == "done" and runner.tasks == []


def test_an_error_is_a_message_and_the_log_reaches_this_process(qtbot, runner, caplog):
    caplog.set_level("INFO")
    task = runner.run(task_ops.fail, "/nowhere/clip.mp4: no such file", label="fail")
    seen = outcome(task)
    with qtbot.waitSignal(task.finished, timeout=WAIT_MS):
        pass
    assert seen["error"] == "/nowhere/clip.mp4: no such file"  # the op's own words, no traceback
    assert any(r.name == "egodesk.test" and r.getMessage() == "about to fail" for r in caplog.records)


def test_a_crashing_worker_fails_only_its_task(qtbot, runner):
    task = runner.run(task_ops.crash, 7, label="crash")
    seen = outcome(task)
    with qtbot.waitSignal(task.finished, timeout=WAIT_MS):
        pass
    assert "exit code 7" in seen["error"]
    after = runner.run(task_ops.count, 1, label="after")
    with qtbot.waitSignal(after.succeeded, timeout=WAIT_MS) as blocker:
        pass
    assert blocker.args == [10]


def test_cancel_asks_first_then_ends_the_process(qtbot, runner):
    polite = runner.run(task_ops.wait_for_stop, 30, label="polite")
    seen = outcome(polite)
    qtbot.wait(800)
    polite.cancel(grace_s=10)
    with qtbot.waitSignal(polite.finished, timeout=WAIT_MS):
        pass
    assert seen.get("result") == "stopped"  # it noticed the stop flag and returned

    stubborn = runner.run(task_ops.sleep, 60, label="stubborn")
    seen = outcome(stubborn)
    qtbot.wait(300)
    started = time.monotonic()
    stubborn.cancel(grace_s=0.3)
    with qtbot.waitSignal(stubborn.finished, timeout=WAIT_MS):
        pass
    assert "cancelled" in seen and time.monotonic() - started < 3
    qtbot.waitUntil(lambda: not stubborn.process.is_alive(), timeout=2000)


def test_gui_thread_keeps_ticking_while_a_worker_spins(qtbot, runner):
    meter = StallMeter().start()
    task = runner.run(task_ops.spin, 1.5, label="spin")
    with qtbot.waitSignal(task.finished, timeout=WAIT_MS):
        pass
    gap = meter.stop()
    assert meter.ticks > 50
    assert gap < 250, f"the event loop stalled for {gap} ms"


def finish(qtbot, task):
    with qtbot.waitSignal(task.finished, timeout=WAIT_MS):
        pass
    return task


def test_warm_ops_share_one_process_until_it_is_cancelled(qtbot, runner):
    first = runner.run(task_ops.keep, "library", "open", label="keep", warm=True)
    seen = outcome(first)
    finish(qtbot, first)
    pid = seen["result"]
    second = runner.run(task_ops.recall, "library", label="recall", warm=True)
    seen = outcome(second)
    finish(qtbot, second)
    assert seen["result"] == (pid, "open")  # same process, state kept between ops

    failing = runner.run(task_ops.fail, "no such footage", label="fail", warm=True)
    finish(qtbot, failing)
    again = runner.run(task_ops.recall, "library", label="recall", warm=True)
    seen = outcome(again)
    finish(qtbot, again)
    assert seen["result"] == (pid, "open")  # an op's error does not cost the warm process

    brief = runner.run(task_ops.sleep, 0.5, label="brief", warm=True)
    queued = runner.run(task_ops.recall, "library", label="queued", warm=True)
    seen = outcome(queued)
    assert queued.state == "pending"
    finish(qtbot, queued)
    assert brief.state == "done" and seen["result"] == (pid, "open")  # its turn came, in the same process

    slow = runner.run(task_ops.sleep, 60, label="slow", warm=True)
    given_up = runner.run(task_ops.recall, "library", label="given up", warm=True)
    after = runner.run(task_ops.recall, "library", label="recall", warm=True)
    assert given_up.state == after.state == "pending"  # the warm process is busy: they wait their turn
    given_up.cancel()
    assert given_up.state == "cancelled" and given_up not in runner.tasks  # a waiting one just ends
    qtbot.wait(200)
    seen = outcome(after)
    slow.cancel(grace_s=0)
    finish(qtbot, after)
    assert seen["result"][0] != pid and seen["result"][1] is None  # cancelling ended it: a fresh one
