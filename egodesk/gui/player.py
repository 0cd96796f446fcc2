"""The video player: QMediaPlayer + QVideoWidget with transport controls and an optional loop range.

Qt Multimedia ignores `setPosition` until the media reached LoadedMedia, so a seek asked for while
loading is kept and applied once, on the first LoadedMedia (the status comes back after each seek's
buffering). Seeks go to the middle of the wanted frame so a frame boundary never rounds down a frame.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtMultimedia import QAudioOutput, QMediaDevices, QMediaMetaData, QMediaPlayer, QVideoFrame
from PySide6.QtMultimediaWidgets import QVideoWidget
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSlider,
    QStackedWidget,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from egodesk.gui import media_calls
from egodesk.gui.formatting import fmt_duration, frame_center

SPEEDS = (0.25, 0.5, 1.0, 1.5, 2.0, 4.0)
_RETIRED: list[QObject] = []  # media objects of closed players, kept alive (see Player.retire)
SEEK_STEP_S = 5.0
DEFAULT_FPS = 30.0


class Player(QWidget):
    position_changed = Signal(float)  # seconds into the file
    media_loaded = Signal(float)  # duration in seconds
    loop_changed = Signal(object)  # (start, end) in seconds into the file, or None
    media_failed = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.path: Path | None = None
        self.fps = DEFAULT_FPS
        self.loop: tuple[float, float] | None = None
        self.frame_time: float | None = None  # start of the frame on screen (s), from the video sink
        self._loaded = False
        self._pending_seek: float | None = None
        self._play_after_seek = False

        self.media = QMediaPlayer(self)
        self.audio = QAudioOutput(self)
        self._devices = QMediaDevices(self)
        self._devices.audioOutputsChanged.connect(self._attach_audio)
        self._attach_audio()
        self.video = QVideoWidget(self)
        self.video.setObjectName("video")
        self.media.setVideoOutput(self.video)
        self.video.videoSink().videoFrameChanged.connect(self._on_frame)
        self.placeholder = QLabel("Open a footage from the library, or import some.", self)
        self.placeholder.setObjectName("player-placeholder")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.stack = QStackedWidget(self)
        self.stack.setObjectName("player-stack")
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(self.video)
        # The video surface is made the first time it shows: shown under the placeholder once the window
        # first shows, that one-off cost is paid at start, not when the first footage opens.
        self.stack.setCurrentWidget(self.video)
        self._surface_ready = False

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.stack, 1)
        layout.addLayout(self._build_controls())

        self.media.mediaStatusChanged.connect(self._on_status)
        self.media.positionChanged.connect(self._on_position)
        self.media.durationChanged.connect(lambda ms: self.slider.setRange(0, max(0, ms)))
        self.media.playbackStateChanged.connect(self._on_state)
        self.media.errorOccurred.connect(self._on_error)

    def _build_controls(self) -> QHBoxLayout:
        style = self.style()
        self.play_button = self._button(
            style.standardIcon(QStyle.StandardPixmap.SP_MediaPlay), "Play / pause (Space)", self.toggle_play
        )
        self.play_button.setObjectName("play")
        back = self._button(
            style.standardIcon(QStyle.StandardPixmap.SP_MediaSeekBackward), "Previous frame (,)", lambda: self.step(-1)
        )
        forward = self._button(
            style.standardIcon(QStyle.StandardPixmap.SP_MediaSeekForward), "Next frame (.)", lambda: self.step(1)
        )
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setObjectName("seek-slider")
        self.slider.sliderMoved.connect(lambda ms: self.seek(ms / 1000.0))
        self.time_label = QLabel("0:00 / 0:00", self)
        self.time_label.setObjectName("time-label")
        self.speed = QComboBox(self)
        self.speed.setToolTip("Playback speed")
        for value in SPEEDS:
            self.speed.addItem(f"{value:g}×", value)
        self.speed.setCurrentIndex(SPEEDS.index(1.0))
        self.speed.currentIndexChanged.connect(lambda i: self.media.setPlaybackRate(self.speed.itemData(i)))
        self.mute = self._button(style.standardIcon(QStyle.StandardPixmap.SP_MediaVolume), "Mute", self._toggle_mute)
        self.volume = QSlider(Qt.Orientation.Horizontal, self)
        self.volume.setRange(0, 100)
        self.volume.setValue(80)
        self.volume.setMaximumWidth(90)
        self.volume.setToolTip("Volume")
        self.volume.valueChanged.connect(lambda v: self.audio.setVolume(v / 100.0))
        self.audio.setVolume(0.8)
        self.loop_label = QToolButton(self)
        self.loop_label.setObjectName("loop-chip")
        self.loop_label.setToolTip("Looping an evidence range: click to stop")
        self.loop_label.clicked.connect(self.clear_loop)
        self.loop_label.hide()

        row = QHBoxLayout()
        for widget in (self.play_button, back, forward):
            row.addWidget(widget)
        row.addWidget(self.slider, 1)
        for widget in (self.time_label, self.loop_label, self.speed, self.mute, self.volume):
            row.addWidget(widget)
        return row

    def _button(self, icon, tip: str, slot) -> QToolButton:
        button = QToolButton(self)
        button.setIcon(icon)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        button.clicked.connect(slot)
        return button

    def install_shortcuts(self, window: QWidget) -> None:
        """Window-wide keys. Text fields keep their own keys: Qt lets a focused line edit override them."""
        keys = {
            Qt.Key.Key_Space: self.toggle_play,
            Qt.Key.Key_Left: lambda: self.seek(self.position() - SEEK_STEP_S),
            Qt.Key.Key_Right: lambda: self.seek(self.position() + SEEK_STEP_S),
            Qt.Key.Key_Comma: lambda: self.step(-1),
            Qt.Key.Key_Period: lambda: self.step(1),
        }
        for key, slot in keys.items():
            QShortcut(QKeySequence(key), window, slot)

    # -- opening and seeking -------------------------------------------------------------------

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._surface_ready:
            self._surface_ready = True
            QTimer.singleShot(0, lambda: self.path is None and self.stack.setCurrentWidget(self.placeholder))

    def open(self, path: Path, at: float | None = None, play: bool = False) -> None:
        """Show a video file, optionally at the moment `at` (seconds); reopening the file only seeks."""
        path = Path(path)
        self.stack.setCurrentWidget(self.video)
        if path == self.path and self._loaded:
            if at is not None:
                self.seek_moment(at)
            if play:
                self.media.play()
            return
        self.clear_loop()
        self.path, self._loaded, self.frame_time = path, False, None
        self._pending_seek, self._play_after_seek = at, play
        media_calls.set_source(self.media, QUrl.fromLocalFile(str(path)))

    def show_message(self, text: str) -> None:
        """Nothing to play (text-only footage, no footage): stop and say why."""
        self.release_media()
        self.clear_loop()
        self.placeholder.setText(text)
        self.stack.setCurrentWidget(self.placeholder)

    def release_media(self) -> None:
        """Stop and let the file go, ending the playback engine's threads (`media_calls` says why not
        through the bindings)."""
        media_calls.stop(self.media)
        media_calls.set_source(self.media, QUrl())
        self.path, self._loaded = None, False

    def _attach_audio(self) -> None:
        """Play sound once the system has an audio output. Without one (a headless machine, a server
        with no sound card) the engine is given no audio output at all: its audio thread would only
        fail to open a device, and it is the thread that calls back into PySide-made objects."""
        if self.media.audioOutput() is None and QMediaDevices.audioOutputs():
            self.media.setAudioOutput(self.audio)

    def retire(self) -> None:
        """The window is closing: release the media, then keep the player and its audio output alive
        for the rest of the process instead of destroying them with the window. The FFmpeg engine ends
        its threads asynchronously, and those threads call virtuals of these PySide-made objects while
        they wind down; destroyed under them, that is a use-after-free (a CI run segfaulted in a Qt
        thread while a test window closed). Two small idle objects per closed window is the price."""
        self.release_media()
        for media_object in (self.media, self.audio):
            media_object.setParent(None)
            _RETIRED.append(media_object)

    @property
    def loaded(self) -> bool:
        return self._loaded

    def position(self) -> float:
        return self.media.position() / 1000.0

    def duration(self) -> float:
        return self.media.duration() / 1000.0

    def shown_position(self) -> float | None:
        """Where the picture is (s into the file): the start of the frame on screen, to which
        `seek_moment` comes back exactly; while loading, the moment asked for; None when none is."""
        if not self._loaded:
            return self._pending_seek
        return self.frame_time if self.frame_time is not None else self.position()

    def seek(self, seconds: float) -> None:
        """Go to `seconds`; a target outside the loop range ends the loop (the user went elsewhere)."""
        seconds = max(0.0, seconds)
        if not self._loaded:
            self._pending_seek = seconds
            return
        if self.loop and not self._in_loop(seconds):
            self.clear_loop()
        if self.duration() > 0:
            seconds = min(seconds, self.duration())
        self.media.setPosition(int(round(seconds * 1000)))

    def seek_moment(self, seconds: float) -> None:
        """Show the moment starting at `seconds`: half a frame in, so a frame boundary cannot round
        down to the frame before."""
        if not self._loaded:
            self._pending_seek = seconds
            return
        self.seek(seconds + 0.5 / self.fps)

    def _in_loop(self, seconds: float) -> bool:
        return self.loop is not None and self.loop[0] - 0.5 / self.fps <= seconds < self.loop[1]

    def step(self, frames: int) -> None:
        self.media.pause()
        self.seek(frame_center(self.position() + frames / self.fps, self.fps))

    def toggle_play(self) -> None:
        if self.media.playbackState() == QMediaPlayer.PlaybackState.PlayingState:
            self.media.pause()
        elif self._loaded:
            self.media.play()

    def set_loop(self, start: float, end: float) -> None:
        """Loop [start, end) while playing, until `clear_loop` (or the chip is clicked)."""
        self.loop = (start, max(end, start + 1.0 / self.fps))
        self.loop_label.setText(f"⟲ {fmt_duration(start)}–{fmt_duration(end)}  ✕")
        self.loop_label.show()
        self.loop_changed.emit(self.loop)

    def clear_loop(self) -> None:
        if self.loop is not None:
            self.loop = None
            self.loop_label.hide()
            self.loop_changed.emit(None)

    # -- media events --------------------------------------------------------------------------

    def _on_status(self, status: QMediaPlayer.MediaStatus) -> None:
        if status == QMediaPlayer.MediaStatus.LoadedMedia and not self._loaded:
            self._loaded = True
            rate = self.media.metaData().value(QMediaMetaData.Key.VideoFrameRate)
            self.fps = float(rate) if rate else DEFAULT_FPS
            self.media.pause()  # paused, the frame at the position is decoded and shown
            if self._pending_seek is not None:
                pending, self._pending_seek = self._pending_seek, None
                self.seek_moment(pending)
            if self._play_after_seek:
                self.media.play()
            self._show_time(self.position())
            self.media_loaded.emit(self.duration())
        elif status == QMediaPlayer.MediaStatus.InvalidMedia:
            self._on_error()

    def _on_error(self, *_args) -> None:
        message = f"Cannot play {self.path.name if self.path else 'this file'}: {self.media.errorString() or 'unsupported or damaged media'}"
        self.show_message(message)
        self.media_failed.emit(message)

    def _on_position(self, ms: int) -> None:
        seconds = ms / 1000.0
        playing = self.media.playbackState() == QMediaPlayer.PlaybackState.PlayingState
        if self.loop and playing and not self._in_loop(seconds):
            self.seek_moment(self.loop[0])
            return
        if not self.slider.isSliderDown():
            self.slider.setValue(ms)
        self._show_time(seconds)
        self.position_changed.emit(seconds)

    def _show_time(self, seconds: float) -> None:
        self.time_label.setText(f"{fmt_duration(seconds)} / {fmt_duration(self.duration())}")

    def _on_state(self, state: QMediaPlayer.PlaybackState) -> None:
        icon = (
            QStyle.StandardPixmap.SP_MediaPause
            if state == QMediaPlayer.PlaybackState.PlayingState
            else QStyle.StandardPixmap.SP_MediaPlay
        )
        self.play_button.setIcon(self.style().standardIcon(icon))

    def _on_frame(self, frame: QVideoFrame) -> None:
        if frame.isValid():
            self.frame_time = frame.startTime() / 1e6

    def _toggle_mute(self) -> None:
        self.audio.setMuted(not self.audio.isMuted())
        icon = QStyle.StandardPixmap.SP_MediaVolumeMuted if self.audio.isMuted() else QStyle.StandardPixmap.SP_MediaVolume
        self.mute.setIcon(self.style().standardIcon(icon))
