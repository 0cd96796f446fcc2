"""Speaker ground truth of a test day: who speaks when in each recording, from the day's script.

The script (`make_day.script`) knows every line's voice and its spoken span in wall-clock seconds; a
recording's turns are its lines' spans moved to seconds from the file's start, the time base of its
audio track. The span is espeak-ng's rendering length, so it includes the synthesiser's short lead-in
and tail silences and not the room's reverberation tail (`realism.through`): the diarization error rate
is scored with a collar around every boundary for exactly such edges.

The voice names are the people: "wearer" is the camera's wearer (the library's "me").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .make_day import Line, Recording, script

WEARER = "wearer"


@dataclass(frozen=True)
class Turn:
    """One speaker's stretch of speech in one recording, in seconds from the file's start."""

    recording: str
    speaker: str
    start: float
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


def turns_of(plan: tuple[Recording, ...], lines: Iterable[Line] | None = None) -> dict[str, list[Turn]]:
    """Each recording's speaker turns in time order (every recording of `plan` has a key, even a silent
    one); `lines` defaults to `script(plan)`, which renders every line once to learn its length."""
    from egodesk.core.timeutil import to_ts

    starts = {r.name: to_ts(r.start) for r in plan}
    out: dict[str, list[Turn]] = {r.name: [] for r in plan}
    for line in script(plan) if lines is None else lines:
        offset = starts[line.recording]
        out[line.recording].append(Turn(line.recording, line.voice, line.start - offset, line.end - offset))
    for turns in out.values():
        turns.sort(key=lambda t: (t.start, t.end))
    return out


def speakers_of(turns: dict[str, list[Turn]]) -> list[str]:
    """Every person heard in the day, the wearer first, then by total speaking time."""
    total: dict[str, float] = {}
    for recording in turns.values():
        for turn in recording:
            total[turn.speaker] = total.get(turn.speaker, 0.0) + turn.seconds
    return sorted(total, key=lambda s: (s != WEARER, -total[s], s))


def words_with_their_speaker(lines: Iterable[Line], words: Iterable[tuple[str, float, float]]) -> tuple[int, int]:
    """Of the recognised words (each its line's label in the library and its wall-clock span) whose middle
    falls in a scripted line, how many carry that line's speaker as their label ("me" for the wearer),
    and how many there are: who said what, as the answers read it, word by word. Where two scripted lines
    overlap, either speaker counts."""
    spans = sorted((line.start, line.end, "me" if line.voice == WEARER else line.voice) for line in lines)
    right = total = 0
    for label, start, end in words:
        middle = (start + end) / 2
        said_by = {speaker for a, b, speaker in spans if a <= middle <= b}
        if said_by:
            total += 1
            right += label in said_by
    return right, total
