"""The centre of the window: the player over the timeline, kept in step with each other and with the
memory browser. Knows which footage is open and maps between absolute time (timeline, evidence,
memories) and seconds into the file (player). It follows the window's `Selection`: the moments on
show are marked on the timeline, and the one picked plays in a loop. The search field's hits have their
own lane (`mark_search`), and a picked hit plays from its start (`play_hit`). Its library reads (a footage's
clips, the memories of the moment under the playhead) run off the GUI thread (`Reads`)."""

from __future__ import annotations

import bisect
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from egodesk.core.types import Evidence
from egodesk.gui.formatting import day_of, day_start, elide
from egodesk.gui.memory_browser import MemoryBrowser
from egodesk.gui.player import Player
from egodesk.gui.reads import Reads
from egodesk.gui.selection import Selection
from egodesk.gui.timeline import Span, TimelinePanel

PLAYED = ("video", "audio")  # the kinds of footage the player plays (a voice note: sound over a dark picture)


def playable(footage: Any) -> bool:
    return footage.kind in PLAYED and Path(footage.path).exists()


class FootageView(QWidget):
    message = Signal(str)  # for the status bar

    def __init__(self, library: Any, memory: MemoryBrowser, reads: Reads, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.library, self.memory, self.reads, self.selection = library, memory, reads, selection
        self.footage: dict[int, Any] = {}
        self.current: Any = None
        self.clips: list[Any] = []
        self._clip_starts: list[float] = []
        self._moment_asked: tuple[int, int] | None = None  # the clip whose memories are being read
        self.search_hits: list[Any] = []
        self.player = Player(self)
        self.timeline_panel = TimelinePanel(self)
        self.timeline = self.timeline_panel.timeline
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.setObjectName("centre-splitter")
        splitter.addWidget(self.player)
        splitter.addWidget(self.timeline_panel)
        splitter.setStretchFactor(0, 1)
        splitter.setCollapsible(0, False)
        splitter.setCollapsible(1, False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

        self.player.position_changed.connect(self._on_player_position)
        self.player.loop_changed.connect(self._on_loop)
        self.player.media_failed.connect(self.message)
        self.timeline.seek_requested.connect(self.seek_to)
        self.memory.seek_requested.connect(self.seek_to)
        self.timeline.evidence_clicked.connect(selection.select)
        self.timeline.search_clicked.connect(self.play_hit)
        selection.shown.connect(self._mark_evidence)
        selection.picked.connect(self._play_picked)

    # -- footage ---------------------------------------------------------------------------------

    def set_footage(self, footage: list[Any]) -> None:
        """The library changed: keep the open footage if it is still there."""
        self.footage = {f.id: f for f in footage}
        if self.current is not None:
            if self.current.id in self.footage:
                self.current = self.footage[self.current.id]
                self._load_lanes()
            else:
                self.close_footage("That footage was forgotten.")

    def open_footage(self, footage_id: int, at: float | None = None, play: bool = False) -> bool:
        """Open a footage, optionally at `at` seconds into it. False when it is not in the library."""
        footage = self.footage.get(footage_id)
        if footage is None:
            self.message.emit("That footage is no longer in the library.")
            return False
        changed = self.current is None or self.current.id != footage_id
        self.current = footage
        if changed:
            self._load_lanes()
            self.timeline_panel.set_day(day_start(footage.start), (footage.start, footage.start + footage.duration))
        if playable(footage):
            self.player.open(Path(footage.path), at=at, play=play)
            if at is None and changed:
                self._set_playhead(footage.start)
        else:
            why = (
                "is a photo: it has no video to play"
                if footage.kind == "photo"
                else "is text only (imported captions or transcripts): there is no video to play"
                if footage.kind == "text"
                else f"cannot be played: {footage.path} is missing"
            )
            self.player.show_message(f"“{footage.title}” {why}. Its memories are on the timeline and in the memory panel.")
            self._set_playhead(footage.start + (at or 0.0))
        return True

    def close_footage(self, why: str = "") -> None:
        self.current = None
        self.clips, self._clip_starts, self._moment_asked = [], [], None
        self.player.show_message(why or "Open a footage from the library.")
        for lane in ("Footage", "Clips", "Speech"):
            self.timeline.set_lane(lane, [])
        self.timeline.set_playhead(None)
        self.memory.show_memory(None)

    def _load_lanes(self) -> None:
        footage = self.current
        same_day = [f for f in self.footage.values() if day_of(f.start) == day_of(footage.start)]
        self.timeline.set_lane("Footage", [Span(f.start, f.start + f.duration, f.title, f.id) for f in same_day])
        self.reads.read(
            "clips",
            lambda: self.library.clips(footage.id),
            lambda clips: self._show_clips(footage.id, clips),
            lambda exc: self.message.emit(f"Could not read the clips of this footage: {exc}"),
        )

    def _show_clips(self, footage_id: int, clips: list[Any]) -> None:
        footage = self.current
        if footage is None or footage.id != footage_id:
            return
        self.clips, self._clip_starts = clips, [c.start for c in clips]
        self.timeline.set_lane(
            "Clips", [Span(c.start, c.end, elide(c.caption, 200) or f"clip {c.idx + 1}", footage.id) for c in self.clips]
        )
        self.timeline.set_lane(
            "Speech",
            [
                Span(s, e, f"{speaker + ': ' if speaker else ''}{text}", footage.id, group=speaker)
                for c in self.clips
                for s, e, speaker, text in c.transcript
            ],
        )
        shown, self.memory.key, self._moment_asked = self.memory.key, None, None
        if self.timeline.playhead is not None:
            self._set_playhead(self.timeline.playhead)
        if self._moment_asked is None and shown is not None and shown[0] == footage_id:
            # the playhead is past the clip the panel shows (the end of the footage): show it as it is now
            self._show_clip_at(next(((c.start + c.end) / 2 for c in clips if c.idx == shown[1]), footage.start))

    # -- time --------------------------------------------------------------------------------------

    def seek_to(self, ts: float) -> None:
        """Go to absolute time `ts`: in the open footage, or in the footage of that day that holds it."""
        footage = self.current
        if footage is not None and footage.start <= ts <= footage.start + footage.duration:
            if playable(footage) and self.player.loaded:
                self.player.seek(ts - footage.start)
            else:
                self._set_playhead(ts)
            return
        other = next((f for f in self.footage.values() if f.start <= ts <= f.start + f.duration), None)
        if other is not None:
            self.open_footage(other.id, at=ts - other.start)

    def _on_player_position(self, seconds: float) -> None:
        if self.current is not None:
            self._set_playhead(self.current.start + seconds)

    def _set_playhead(self, ts: float) -> None:
        self.timeline.set_playhead(ts)
        self._show_clip_at(ts)

    def _show_clip_at(self, ts: float) -> None:
        """Read the memory of the clip holding `ts` into the memory panel, unless it is shown or asked."""
        footage = self.current
        i = bisect.bisect_right(self._clip_starts, ts) - 1
        if footage is None or i < 0 or ts > self.clips[i].end:
            return
        clip = self.clips[i]
        key = (footage.id, clip.idx)
        if key in (self.memory.key, self._moment_asked):
            return
        self._moment_asked = key
        offset = ts - footage.start
        self.reads.read(
            "moment", lambda: self.library.memory_at(footage.id, offset), lambda m: self._show_moment(m, key), self._moment_failed
        )

    def _show_moment(self, memory: Any, key: tuple[int, int]) -> None:
        self._moment_asked = None
        if self.current is not None and self.current.id == key[0]:  # not a footage closed meanwhile
            self.memory.show_memory(memory, key)

    def _moment_failed(self, exc: Exception) -> None:
        self._moment_asked = None
        self.message.emit(f"Could not read the memories of this moment: {exc}")

    # -- evidence ----------------------------------------------------------------------------------

    def _mark_evidence(self) -> None:
        """New moments on show: mark them on the timeline; the loop of an earlier moment ends."""
        self.player.clear_loop()
        self.timeline.set_loop(None)
        evidence = self.selection.evidence
        self.timeline.set_evidence([Span(ev.start, ev.end, f"#{i + 1}", i, elide(ev.text, 300)) for i, ev in enumerate(evidence)])

    def _play_picked(self, index: int | None) -> None:
        evidence = self.selection.picked_evidence
        if evidence is None:
            self.player.clear_loop()
            self.timeline.set_loop(None)
            self.timeline.highlight_evidence(None)
        else:
            self.show_evidence(index, evidence)

    def show_evidence(self, index: int, evidence: Evidence) -> bool:
        """Open the evidence's footage at its start (+ half a frame, see Player.seek_moment), loop its
        range until dismissed, and highlight it on the timeline."""
        footage = self.footage.get(evidence.footage_id)
        if footage is None:
            self.message.emit("This moment's footage is no longer in the library.")
            return False
        offset = evidence.offset if evidence.offset is not None else evidence.start - footage.start
        length = max(0.0, evidence.end - evidence.start)
        if not self.open_footage(footage.id, at=offset, play=playable(footage)):
            return False
        if playable(footage):
            self.player.set_loop(offset, offset + length)
        self.timeline.highlight_evidence(index)
        self.timeline.set_loop((footage.start + offset, footage.start + offset + length))
        pad = max(5.0, length)
        self.timeline.show_range(footage.start + offset - pad, footage.start + offset + length + pad)
        return True

    # -- search hits -------------------------------------------------------------------------------

    def mark_search(self, hits: list[Any]) -> None:
        """The search field's hits (`retrieval.search.SearchHit`) on the timeline's Search lane."""
        self.search_hits = hits
        self.timeline.set_lane(
            "Search",
            [Span(h.start, max(h.end, h.start + 1.0), ", ".join(h.words), i, elide(h.text, 300)) for i, h in enumerate(hits)],
        )

    def play_hit(self, index: int) -> bool:
        """Open hit `index`'s footage at the hit and play it there, the timeline around it."""
        hit = self.search_hits[index]
        return self.play_moment(hit.footage_id, hit.start, hit.end)

    def play_moment(self, footage_id: int, start: float, end: float) -> bool:
        """Open a footage at a moment (wall-clock span: a search hit, a starred moment, a note) and play
        it from its start, the timeline around it."""
        footage = self.footage.get(footage_id)
        if footage is None:
            self.message.emit("This moment's footage is no longer in the library.")
            return False
        if not self.open_footage(footage.id, at=start - footage.start, play=playable(footage)):
            return False
        pad = max(10.0, end - start)
        self.timeline.show_range(start - pad, end + pad)
        return True

    def _on_loop(self, loop: tuple[float, float] | None) -> None:
        if loop is None:
            self.timeline.set_loop(None)
            self.timeline.highlight_evidence(None)
            self.selection.select(None)
