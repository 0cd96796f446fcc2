"""What speech recognition heard against what the test day's script says: the word error rate per voice
and per noise level, and which questions' key words were not heard as said.

A script line is compared with the recognised words whose middle falls inside the line's spoken span
(a little slack at both ends for timing); both sides are normalised as the answer judge reads them
(judge.normalize: lower case, number words as digits), so "forty eight" heard as "48" is no error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from egodesk.core.soundalike import edit_distance

from .judge import normalize
from .make_day import Line

SLACK_S = (0.3, 0.6)  # recognised words may start a little early and end a little after the script's span


@dataclass(frozen=True)
class HeardWord:
    text: str
    start: float
    end: float
    probability: float


def word_errors(reference: Sequence[str], hypothesis: Sequence[str]) -> int:
    """Substitutions + deletions + insertions that turn `reference` into `hypothesis`."""
    return edit_distance(reference, hypothesis)


def heard_during(words: Sequence[HeardWord], start: float, end: float) -> list[str]:
    """The recognised words (normalised) said between `start` and `end`, with SLACK_S."""
    inside = [w.text for w in words if start - SLACK_S[0] <= (w.start + w.end) / 2 <= end + SLACK_S[1]]
    return normalize(" ".join(inside))


@dataclass
class Tally:
    errors: int = 0
    words: int = 0
    lines: int = 0

    @property
    def wer(self) -> float:
        return self.errors / self.words if self.words else 0.0


def noise_label(line: Line) -> str:
    return "quiet" if line.snr_db is None else f"{line.noise} {line.snr_db:g} dB"


def wer_by(lines: Iterable[Line], words: Sequence[HeardWord]) -> dict[str, dict[str, Tally]]:
    """Word errors against the script, grouped by voice (with its room) and by noise level, plus 'all'."""
    groups: dict[str, dict[str, Tally]] = {"voice": {}, "noise": {}, "all": {}}
    for line in lines:
        reference = normalize(line.words)
        errors = word_errors(reference, heard_during(words, line.start, line.end))
        for kind, name in (("voice", f"{line.voice} ({line.room})"), ("noise", noise_label(line)), ("all", "all")):
            tally = groups[kind].setdefault(name, Tally())
            tally.errors += errors
            tally.words += len(reference)
            tally.lines += 1
    return groups


def wer_table(groups: dict[str, dict[str, Tally]]) -> str:
    rows = [f"{'':<28}{'WER':>8}{'words':>8}{'lines':>7}"]
    for kind in ("voice", "noise", "all"):
        for name, tally in sorted(groups[kind].items()):
            rows.append(f"{name:<28}{tally.wer:>8.3f}{tally.words:>8}{tally.lines:>7}")
    return "\n".join(rows)


def unheard(
    keys: Iterable[str], lines: Iterable[Line], words: Sequence[HeardWord], spans: Iterable[tuple[float, float]]
) -> list[str]:
    """The key words of a question that its moments' script says and recognition did not hear there."""
    spans = list(spans)
    said = [line for line in lines if any(line.start < end and start < line.end for start, end in spans)]
    out = []
    for key in keys:
        target = normalize(key)
        in_script = any(_holds(normalize(line.words), target) for line in said)
        if in_script and not any(_holds(heard_during(words, line.start, line.end), target) for line in said):
            out.append(key)
    return out


def _holds(words: Sequence[str], target: Sequence[str]) -> bool:
    """Whether `target` is in `words`, a word also counting with a plural or possessive ending."""
    n = len(target)
    stems = [w.removesuffix("s") for w in words]
    goal = [w.removesuffix("s") for w in target]
    return n > 0 and any(stems[i : i + n] == goal for i in range(len(stems) - n + 1))
