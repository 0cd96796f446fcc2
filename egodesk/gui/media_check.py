"""Can Qt Multimedia open a video here? `python -m egodesk.gui.media_check FILE` (used by `egodesk
doctor`). Prints one line; exit 0 when a QMediaPlayer reached LoadedMedia with a duration."""

from __future__ import annotations

import sys

TIMEOUT_MS = 20_000


def main(path: str) -> int:
    from PySide6.QtCore import QTimer, QUrl
    from PySide6.QtMultimedia import QMediaPlayer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    player = QMediaPlayer()
    outcome: dict[str, str] = {}

    def on_status(status) -> None:
        if status == QMediaPlayer.MediaStatus.LoadedMedia:
            outcome["ok"] = f"QMediaPlayer loaded a video ({player.duration()} ms)"
            app.quit()
        elif status == QMediaPlayer.MediaStatus.InvalidMedia:
            outcome["error"] = f"invalid media: {player.errorString()}"
            app.quit()

    player.mediaStatusChanged.connect(on_status)
    player.errorOccurred.connect(lambda *_: (outcome.setdefault("error", player.errorString()), app.quit()))
    QTimer.singleShot(TIMEOUT_MS, app.quit)
    player.setSource(QUrl.fromLocalFile(path))
    app.exec()
    if "ok" in outcome and player.duration() > 0:
        print(outcome["ok"])
        return 0
    print(outcome.get("error", "timed out waiting for the media to load"))
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
