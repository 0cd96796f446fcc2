"""Domain types shared by every layer. Plain dataclasses: no database, no Qt, no model code.

Times (`start`, `end`) are absolute wall-clock seconds (see `egodesk.core.timeutil`); `offset` is
seconds from the start of the footage file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class FootageKind(str, Enum):
    VIDEO = "video"
    AUDIO = "audio"  # a sound recording (a voice note): speech only
    PHOTO = "photo"  # a still picture: a moment with what is seen and written in it
    TEXT = "text"  # imported captions or transcripts without video (SRT/VTT, benchmark memory.jsonl)


@dataclass(frozen=True)
class Progress:
    """One progress event of a long job: `done` of `total` units of `stage` (total 0 = unknown)."""

    stage: str
    done: int
    total: int
    footage_id: int | None = None
    message: str = ""


@dataclass(frozen=True)
class ClipSpan:
    """A planned clip of a footage file."""

    index: int
    offset: float
    duration: float


@dataclass(frozen=True)
class Moment:
    """A time range of one footage: what evidence points at, what the player seeks to."""

    footage_id: int
    start: float
    end: float

    def overlaps(self, start: float, end: float) -> bool:
        return self.start < end and start < self.end


@dataclass
class Evidence:
    """One retrieved memory unit, ranked by a strategy, with where it came from."""

    unit_id: int
    footage_id: int
    source: str
    start: float
    end: float
    text: str
    score: float
    kind: str = "caption"
    strategy: str = ""
    view: str = ""
    ranks: dict[str, int] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)
    offset: float | None = None  # seconds into the footage file, when there is one
    keyframe: str = ""  # an image of the moment (the first keyframe of the clip it starts in), when there is one
    # The strategy pinpointed this as the moment the question asks about ("the last time I ...", that
    # time and what came right after); when any unit is pinpointed, the answer rests on those alone.
    pinpointed: bool = False
    # A pinpointed moment's part in "what did I do right after (before) X": "anchor" for X's moment,
    # "after" ("before") for those next to it. The answerer is told which is which.
    role: str = ""
    rank: int = 0  # 1-based position in the strategy's ranking (0: not ranked)
    # What the unit's clip showed on screen or said in numbers, when the unit's own text dropped it
    # (an atomic statement or a record written from a caption): the answerer is shown it too.
    facts: str = ""

    @property
    def moment(self) -> Moment:
        return Moment(self.footage_id, self.start, self.end)


@dataclass
class Answer:
    """What the answerer returns: the text, the evidence it cites, and how it got there."""

    question: str
    text: str
    evidence: list[Evidence]
    cited: list[int] = field(default_factory=list)  # unit ids the answer cites
    option_index: int | None = None
    abstained: bool = False
    grounded: bool = True
    reasoning: str = ""
    tokens: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


ABSTENTION = "I could not find this in your footage."
