"""The window of an installed app, driven from inside it: tests/packaging runs this file's text with
`egodesk -c TEXT LIBRARY QUESTION STARTED` (the frozen app's own Python; `python window_check.py ...`
does the same from a source checkout, for comparison).

On an indexed library it shows the main window offscreen, loads llama.cpp in this Qt process (the
import order that crashed frozen apps elsewhere), asks a question through the window (answered in a
spawned worker process), then opens the footage, plays it, pauses and seeks. Prints one JSON line.
"""

import json
import sys
import time

SEEK_TO_S = 7.345


def wait_until(app, condition, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"window check: no {what} within {timeout_s:.0f} s")
        app.processEvents()
        time.sleep(0.01)


def main(root: str, question: str, started: float) -> dict:
    from PySide6.QtWidgets import QApplication

    from egodesk.gui.main_window import MainWindow
    from egodesk.pipeline.library import Library

    app = QApplication.instance() or QApplication([])
    library = Library(root)
    window = MainWindow(library)
    window.show()
    wait_until(app, lambda: window.windowHandle() is not None and window.windowHandle().isExposed(), 60, "window")
    from egodesk.gui.help import versions

    report = {"shown_s": round(time.time() - started, 2), "title": window.windowTitle(), "about": versions()[0][1]}

    from llama_cpp import Llama

    from egodesk.core.manifest import locate_file

    llm = Llama(str(locate_file("llm-test")), n_ctx=256, n_threads=1, verbose=False)
    report["token_after_qt"] = llm.create_completion("Hello", max_tokens=1, temperature=0)["choices"][0]["text"]
    del llm

    answers = []
    window.ask_panel.answer_ready.connect(answers.append)
    window.ask_panel.ask(question)
    wait_until(app, lambda: bool(answers), 300, "answer")
    report["answer_evidence"] = len(answers[0].evidence)

    [footage] = library.footage()
    window.view.open_footage(footage.id)
    player = window.player
    wait_until(app, lambda: player.loaded, 60, "loaded video")
    player.toggle_play()
    wait_until(app, lambda: player.position() > 0.5, 60, "playback")
    player.toggle_play()
    report["played_to_s"] = player.position()
    player.seek_moment(SEEK_TO_S)
    wait_until(
        app,
        lambda: player.frame_time is not None and abs(player.frame_time - SEEK_TO_S) <= 1 / player.fps,
        60,
        "frame at the sought time",
    )
    report.update(sought_s=SEEK_TO_S, frame_s=player.frame_time, fps=player.fps)
    window.close()
    library.close()
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], float(sys.argv[3]))), flush=True)
