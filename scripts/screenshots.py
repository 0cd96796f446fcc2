"""Drive the real app on a sample library and save screenshots (run by scripts/screenshots.sh under Xvfb).

Imports the sample footage through the import dialog (shot mid-ingest), waits until it is indexed, asks
a question, clicks the first evidence chip (shot of the main window with the answer), opens the retrieval
inspector, searches for a word, stars the cited moment, shows the People panel (one shot each: the
pictures of docs/guide.md),
then opens the settings dialog and the model manager (one shot each). Shots grab the X screen, not the widgets:
QWidget.grab() of a video widget is blank. Prints the longest event-loop stall it saw while importing,
asking and playing, and apart from it while opening the dialogs (building a dialog is a one-off).
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

QUESTION = "What did the speaker ask people to do for their country?"
SEARCH = "country"
SHOT_WIDTH = 1000
INDEX_TIMEOUT_S = 600
ANSWER_TIMEOUT_S = 300


SHOTS: list[tuple[object, Path]] = []


def grab(widget, path: Path, meter) -> None:
    """Take the screen area under `widget`'s window (the real pixels, video included). The grab's own
    time is not counted as a stall of the app, and saving waits until the end for the same reason."""
    from PySide6.QtGui import QGuiApplication

    frame = widget.window().frameGeometry()
    shot = QGuiApplication.primaryScreen().grabWindow(0, frame.x(), frame.y(), frame.width(), frame.height())
    meter.exclude()
    SHOTS.append((shot, path))


def grab_part(widget, path: Path, meter) -> None:
    """Take the screen area of `widget` alone (a panel of the window), as `grab` does for a window."""
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QGuiApplication

    corner = widget.mapToGlobal(QPoint(0, 0))
    shot = QGuiApplication.primaryScreen().grabWindow(0, corner.x(), corner.y(), widget.width(), widget.height())
    meter.exclude()
    SHOTS.append((shot, path))


def save_shots() -> None:
    """Each shot at most SHOT_WIDTH pixels wide in 256 colours: pictures for docs/, small enough to commit."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage

    for shot, path in SHOTS:
        image = shot.toImage()
        if image.width() > SHOT_WIDTH:
            image = image.scaledToWidth(SHOT_WIDTH, Qt.TransformationMode.SmoothTransformation)
        image = image.convertToFormat(QImage.Format.Format_Indexed8, Qt.ImageConversionFlag.DiffuseDither)
        image.save(str(path))
        print(f"saved {path} ({image.width()}x{image.height()}, {path.stat().st_size // 1024} KiB)", flush=True)


async def wait_for(condition, timeout_s: float, what: str, step_s: float = 0.2) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        await asyncio.sleep(step_s)


async def script(window, out: Path, samples: list[Path], meter, stalls: dict[str, int]) -> None:
    from egodesk.gui.evidence import EvidenceChip, chip_name

    await asyncio.sleep(1.0)
    meter.start()  # from the first import on: the window's first paint at start is not counted
    dialog = window.open_import_dialog()
    dialog.move(window.x() + 260, window.y() + 140)
    dialog.add_paths(samples)
    dialog.start()
    await wait_for(lambda: window.activity_model.stage_count() >= 3, 300, "ingest to get going")
    await asyncio.sleep(0.5)
    grab(dialog, out / "import-dialog.png", meter)
    await wait_for(lambda: window.import_task is None, INDEX_TIMEOUT_S, "indexing to finish", 1.0)
    states = {f.title: f.state for f in window.library.footage()}
    print(f"footage states: {states}", flush=True)
    dialog.accept()

    footage = window.library.footage()
    window.view.open_footage(footage[-1].id)
    await asyncio.sleep(1.0)
    task = window.ask_panel.ask(QUESTION)
    await wait_for(lambda: not task.running, ANSWER_TIMEOUT_S, "the answer", 0.5)
    answer = window.ask_panel.answer
    if answer is None:
        print(f"no answer: {window.ask_panel.message.text()}", flush=True)
    else:
        print(f"answer: {answer.text!r} (abstained={answer.abstained}, {len(answer.evidence)} evidence)", flush=True)
        chip = window.ask_panel.findChild(EvidenceChip, chip_name(0))
        if chip is not None:
            window.selection.select(0)
    await asyncio.sleep(2.5)
    grab(window, out / "main-window-answer.png", meter)

    window.ask_panel.inspector_section.set_expanded(True)
    await asyncio.sleep(0.8)
    grab_part(window.docks["ask"], out / "inspector.png", meter)
    window.ask_panel.inspector_section.set_expanded(False)

    window.docks["search"].show()
    window.docks["search"].raise_()
    window.search_panel.field.setText(SEARCH)
    window.search_panel.run()
    await wait_for(lambda: bool(window.search_panel.hits), 30, "search hits")
    await asyncio.sleep(0.8)
    grab(window, out / "search.png", meter)

    if answer is not None and answer.evidence:
        cited = answer.evidence[0]
        window.keeping.star(cited.footage_id, cited.start, cited.end)
        await wait_for(lambda: bool(window.kept_panel.kept), 30, "the starred moment")
        window.docks["starred"].show()
        window.docks["starred"].raise_()
        await asyncio.sleep(0.8)
        grab_part(window.docks["starred"], out / "starred.png", meter)
    window.docks["people"].show()
    window.docks["people"].raise_()
    await wait_for(lambda: bool(window.people_panel.voices), 30, "the voices heard")
    window.people_panel.tree.expandAll()
    await asyncio.sleep(0.8)
    grab_part(window.docks["people"], out / "people.png", meter)
    stalls["importing, asking, searching and playing"] = meter.stop()
    meter.start()

    settings = window.open_settings()
    settings.move(window.x() + 300, window.y() + 120)
    await asyncio.sleep(0.8)
    grab(settings, out / "settings-dialog.png", meter)
    settings.reject()
    models = window.open_models()
    models.move(window.x() + 200, window.y() + 80)
    await asyncio.sleep(0.8)
    grab(models, out / "model-manager.png", meter)
    models.reject()
    stalls["opening the dialogs"] = meter.stop()


def main(argv: list[str]) -> int:
    import qasync
    from PySide6.QtWidgets import QApplication

    from egodesk.core.logging_setup import setup_logging
    from egodesk.gui.app import apply_style
    from egodesk.gui.main_window import MainWindow
    from egodesk.gui.stall import StallMeter
    from egodesk.pipeline.library import Library

    out = Path(argv[0]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    samples = [Path(p).resolve() for p in argv[1:]]
    app = QApplication(["egodesk"])
    apply_style(app)
    library = Library()
    setup_logging(library.paths)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    window = MainWindow(library)
    window.setGeometry(20, 40, 1500, 920)
    window.show()
    meter = StallMeter().start()
    stalls: dict[str, int] = {}
    status = 0
    with loop:
        try:
            loop.run_until_complete(script(window, out, samples, meter, stalls))
        except Exception as exc:  # noqa: BLE001 - report and still leave the shots taken so far
            print(f"screenshot script failed: {type(exc).__name__}: {exc}", flush=True)
            stalls.setdefault("until it failed", meter.stop())
            status = 1
        for phase, ms in stalls.items():
            print(f"longest event-loop stall {phase}: {ms} ms", flush=True)
        window.close()
    save_shots()
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
