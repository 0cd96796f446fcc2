"""The search field in the real window: hits of the real walk video (a transcript line stored as the
recogniser stores it) and of imported text, listed with their words in bold, marked on the timeline's
Search lane, and played from the hit by a click in the list or on the lane; typing never stalls the window."""

from __future__ import annotations

from PySide6.QtCore import QUrl

from egodesk.gui.stall import StallMeter
from egodesk.memory.schema import TranscriptSegment
from tests.retrieval.test_search import write_memory

WAIT_MS = 15_000


def test_typing_lists_marks_and_plays_the_hits(qtbot, window, tmp_path):
    library = window.library
    (walk,) = window.view.footage.values()
    with library.store.session() as s:  # what ASR stores for the walk's speech (asr is not run here)
        s.add(
            TranscriptSegment(
                footage_id=walk.id,
                idx=0,
                start_ts=walk.start + 5.0,
                end_ts=walk.start + 7.0,
                text="I left the red umbrella by the bench.",
            )
        )
    assert not library.add([write_memory(tmp_path / "memory.jsonl")]).errors
    window.refresh_library()
    qtbot.waitUntil(lambda: window.reads.idle and len(window.view.footage) == 3, timeout=WAIT_MS)

    panel = window.search_panel
    meter = StallMeter().start()
    qtbot.keyClicks(panel.field, "umbrela")  # misspelt: matched spelled alike
    qtbot.waitUntil(lambda: len(panel.hits) == 2, timeout=WAIT_MS)
    stall_ms = meter.stop()
    assert stall_ms < 250, stall_ms
    starts = {f.id: f.start for f in window.view.footage.values()}
    assert {h.title for h in panel.hits} == {"kitchen", walk.title} and all(h.kind == "speech" for h in panel.hits)
    assert [starts[h.footage_id] for h in panel.hits] == sorted(starts[h.footage_id] for h in panel.hits)  # by footage time
    assert all(h.words == ["umbrella"] for h in panel.hits)
    assert panel.results.toHtml().count("font-weight") >= 2 and "umbrella ~" not in panel.status.text()
    assert "also as umbrela ~ umbrella" in panel.status.text()
    [at_walk] = [i for i, h in enumerate(panel.hits) if h.footage_id == walk.id]
    marked = {s.key: s.start for s in window.timeline.lanes["Search"]}
    assert marked == {i: h.start for i, h in enumerate(panel.hits)} and marked[at_walk] == walk.start + 5.0

    panel.results.anchorClicked.emit(QUrl(f"hit:{at_walk}"))  # the list's link of the walk's hit
    player = window.player
    qtbot.waitUntil(lambda: player.loaded and player.frame_time is not None, timeout=WAIT_MS)
    assert window.view.current.id == walk.id and abs(player.position() - 5.0) < 0.5
    player.media.pause()
    window.grab().save(str(tmp_path / "search-window.png"))

    panel.field.clear()
    qtbot.keyClicks(panel.field, '"red umbrella" benc')  # a phrase, and a word being typed
    qtbot.waitUntil(lambda: len(panel.hits) == 1, timeout=WAIT_MS)
    assert panel.hits[0].words == ["red umbrella", "bench"] and window.timeline.lanes["Search"][0].key == 0
    panel.field.clear()
    qtbot.waitUntil(lambda: panel.hits == [] and window.timeline.lanes["Search"] == [], timeout=WAIT_MS)
