"""Unit tests of single widgets and helpers (a SimpleNamespace stands in for a memory view)."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent

from egodesk.core.timeutil import to_ts
from egodesk.core.types import Progress
from egodesk.gui.activity import PERCENT, ActivityModel
from egodesk.gui.formatting import DAY, Eta, fmt_duration, frame_center, group_by_day
from egodesk.gui.memory_browser import MemoryBrowser
from egodesk.gui.timeline import GUTTER, MIN_SPAN_S, Span, Timeline
from egodesk.gui.worker import describe

T0 = to_ts(datetime(2025, 3, 14, 9, 30))


def test_formatting_helpers():
    assert [fmt_duration(s) for s in (0, 7.4, 65, 3723, None, -1)] == ["0:00", "0:07", "1:05", "1:02:03", "-", "-"]
    fps = 30000 / 1001
    assert frame_center(3.0, fps) == pytest.approx(89.5 / fps)  # 3.0 s lies in frame 89
    assert frame_center(90 / fps, fps) == pytest.approx(90.5 / fps)  # a boundary belongs to the next frame
    items = [SimpleNamespace(start=T0 + DAY + 5), SimpleNamespace(start=T0 + 60), SimpleNamespace(start=T0)]
    days = group_by_day(items)
    assert [len(group) for _day, group in days] == [1, 2]  # newest day first
    assert [i.start for i in days[1][1]] == [T0, T0 + 60]  # in time order within a day


def test_eta_from_the_observed_rate():
    now = [0.0]
    eta = Eta(clock=lambda: now[0])
    eta.update(0, 100)
    assert eta.seconds_left() is None
    now[0] = 10.0
    eta.update(25, 100)
    assert eta.seconds_left() == pytest.approx(30.0)
    eta.update(100, 100)
    assert eta.seconds_left() == 0.0


def test_describe_keeps_messages_written_for_people():
    assert describe(FileNotFoundError("clip.mp4: no such file")) == "clip.mp4: no such file"
    assert describe(ZeroDivisionError("division by zero")) == "ZeroDivisionError: division by zero"
    assert describe(KeyError()) == "KeyError"


@pytest.fixture
def timeline(qtbot):
    widget = Timeline()
    widget.resize(GUTTER + 600, 120)
    qtbot.addWidget(widget)
    widget.show()
    widget.show_range(T0, T0 + 60)
    return widget


def test_timeline_click_seeks_and_evidence_click_selects(qtbot, timeline):
    timeline.set_evidence([Span(T0 + 30, T0 + 36, "#1", 0)])
    y = timeline.lane_rect("Clips").center().y()
    with qtbot.waitSignal(timeline.seek_requested) as seek:
        qtbot.mouseClick(timeline, Qt.MouseButton.LeftButton, pos=QPoint(GUTTER + 150, int(y)))
    assert seek.args[0] == pytest.approx(T0 + 15, abs=0.2)
    marker = timeline.span_rect("Evidence", timeline.lanes["Evidence"][0]).center().toPoint()
    with qtbot.waitSignal(timeline.evidence_clicked) as clicked:
        qtbot.mouseClick(timeline, Qt.MouseButton.LeftButton, pos=marker)
    assert clicked.args == [0]


def test_timeline_zooms_from_seconds_to_a_day_around_the_cursor(timeline):
    anchor = T0 + 45
    timeline.zoom(0.5, anchor)
    start, end = timeline.view
    assert end - start == pytest.approx(30) and (anchor - start) / (end - start) == pytest.approx(0.75)
    for _ in range(40):
        timeline.zoom(0.5)
    assert timeline.view[1] - timeline.view[0] == pytest.approx(MIN_SPAN_S)
    for _ in range(60):
        timeline.zoom(2.0)
    assert timeline.view[1] - timeline.view[0] == pytest.approx(DAY)


def test_timeline_wheel_zooms_in(timeline):
    event = QWheelEvent(
        QPointF(GUTTER + 300, 50),
        QPointF(GUTTER + 300, 50),
        QPoint(0, 0),
        QPoint(0, 120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    timeline.wheelEvent(event)
    assert timeline.view[1] - timeline.view[0] == pytest.approx(48)


def test_timeline_pages_along_with_the_playhead(timeline):
    timeline.set_playhead(T0 + 100)
    assert timeline.view[0] <= T0 + 100 <= timeline.view[1]


def _speech_colors(timeline) -> list[tuple[int, int, int]]:
    """The colour painted inside each Speech span, sampled near its left edge (clear of the label's text)."""
    image = timeline.grab().toImage()
    ratio = image.devicePixelRatio()
    colors = []
    for span in timeline.lanes["Speech"]:
        rect = timeline.span_rect("Speech", span)
        pixel = image.pixelColor(int((rect.left() + 1.5) * ratio), int((rect.top() + 2) * ratio))
        colors.append((pixel.red(), pixel.green(), pixel.blue()))
    return colors


def test_timeline_colours_the_speech_lane_by_speaker(qtbot, timeline):
    lines = [("Katrina", "the packages are outside"), ("Tom", "thanks"), ("me", "I will buy milk")]
    lines += [("", "hm"), ("Katrina", "see you")]
    spans = [
        Span(T0 + 10 * i, T0 + 10 * i + 8, f"{who + ': ' if who else ''}{words}", 1, group=who)
        for i, (who, words) in enumerate(lines)
    ]
    timeline.set_lane("Speech", spans)
    katrina, tom, me, unnamed, katrina_again = _speech_colors(timeline)
    assert katrina != tom  # two people, two colours
    assert katrina == katrina_again  # one person, one colour
    assert len({katrina, tom, me, unnamed}) == 4  # the wearer and an unnamed voice each look like no one else
    assert timeline.lanes["Speech"][0].label == "Katrina: the packages are outside"  # the label keeps the name

    other = Timeline()  # another timeline (another footage, another run): the same name, the same colour
    other.resize(GUTTER + 600, 120)
    qtbot.addWidget(other)
    other.show()
    other.show_range(T0 - 30, T0 + 30)
    other.set_lane("Speech", [Span(T0 - 20, T0 - 12, "Tom: hello", 2, group="Tom"), Span(T0, T0 + 8, "me: hi", 2, group="me")])
    assert _speech_colors(other) == [tom, me]


def test_memory_browser_shows_the_moment_and_lines_seek(qtbot):
    browser = MemoryBrowser()
    qtbot.addWidget(browser)
    browser.show()
    memory = SimpleNamespace(
        start=T0,
        end=T0 + 15,
        caption="I walk past a bakery.",
        transcript=[(T0 + 2, T0 + 4, "Katrina", "the packages are outside"), (T0 + 6, T0 + 8, "", "thanks")],
        tags=[("bakery", 0.81)],
        ocr="OPEN",
        records=["I walk past bakery"],
        statements=[],
        line_ids=[7, 8],
    )
    browser.show_memory(memory, key=(1, 0))
    assert browser.transcript.count() == 2 and "Katrina: the packages are outside" in browser.transcript.item(0).text()
    assert not browser.sections["Caption"][1].isHidden() and browser.sections["Atomic statements"][1].isHidden()
    rect = browser.transcript.visualItemRect(browser.transcript.item(1))
    with qtbot.waitSignal(browser.seek_requested) as seek:
        qtbot.mouseClick(browser.transcript.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert seek.args == [T0 + 6]


def test_activity_model_tracks_stages_and_problems():
    model = ActivityModel(lambda fid: f"walk {fid}")
    model.on_progress(Progress("asr", 0, 0, 3, "started"))
    model.on_progress(Progress("asr", 5, 10, 3))
    model.on_progress(Progress("keyframes", 0, 0, 3, "failed: tagger model missing"))
    footage = model.item(0, 0)
    assert footage.text() == "walk 3" and footage.rowCount() == 2
    assert footage.child(0, 1).data(PERCENT) == 50
    assert footage.child(1, 3).text() == "failed: tagger model missing"
    model.add_problems([("/footage/broken.mp4", "not a video (moov atom not found)")])
    assert model.problems == [("/footage/broken.mp4", "not a video (moov atom not found)")]
    assert model.item(1, 0).text() == "Problems" and model.item(1, 0).child(0, 3).text().startswith("not a video")


def test_the_inspector_says_which_window_was_searched(qapp):
    from egodesk.core.types import Answer
    from egodesk.gui.evidence import Inspector

    inspector = Inspector()
    answer = Answer("What did I take at 3 pm?", "paper", [], grounded=True)
    answer.extra["window"] = {"label": "at 3 pm", "start": T0, "end": T0 + 3600}
    inspector.show_answer(answer)
    assert "searched only at 3 pm" in inspector.summary.text()
    del answer.extra["window"]
    answer.extra["recalled"] = {"label": "last year", "start": T0 - 400 * DAY, "end": T0 - 35 * DAY}
    inspector.show_answer(answer)
    assert "no footage from last year" in inspector.summary.text() and "searched what was said later" in inspector.summary.text()
