"""The test days' speaker ground truth (benchmarks/testday/speakers.py) agrees with their scripts."""

from __future__ import annotations

import pytest

from benchmarks.testday import make_day as day
from benchmarks.testday.speakers import WEARER, speakers_of, turns_of
from egodesk.core.timeutil import to_ts


@pytest.mark.parametrize("name", ["clean", "real"])
def test_every_line_is_one_turn_inside_its_recording(name):
    plan = day.plan_of(name)
    lines = day.script(plan)
    turns = turns_of(plan, lines)
    assert set(turns) == {r.name for r in plan}
    assert sum(len(t) for t in turns.values()) == len(lines)
    lengths = {r.name: r.seconds for r in plan}
    for line in lines:
        start = line.start - to_ts(next(r.start for r in plan if r.name == line.recording))
        [turn] = [t for t in turns[line.recording] if t.speaker == line.voice and abs(t.start - start) < 1e-6]
        assert turn.seconds == pytest.approx(line.end - line.start)
        assert 0 <= turn.start < turn.end <= lengths[line.recording]
    for recording in turns.values():
        assert [t.start for t in recording] == sorted(t.start for t in recording)


def test_the_days_people():
    clean = turns_of(day.plan_of("clean"))
    assert speakers_of(clean) == [WEARER, "Maria", "Tom", "Priya", "barista"]
    assert turns_of(day.plan_of("clean"))["20261117_073000"][0].speaker == "Maria"
    real = turns_of(day.plan_of("real"))
    assert speakers_of(real)[0] == WEARER and {"Sam", "Anika", "Tom", "Declan", "Mum", "barista"} <= set(speakers_of(real))
    # The real day has crosstalk: at least one turn starts before the previous one ends.
    assert any(b.start < a.end for turns in real.values() for a, b in zip(turns, turns[1:]))
