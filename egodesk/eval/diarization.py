"""Diarization metrics: the diarization error rate (DER) and the library-wide identity accuracy.

Both are counted on a 10 ms grid. A segment is (speaker, start, end) in seconds; several may overlap
(two people at once), so a grid step holds a set of speakers on each side.

DER, as NIST's md-eval scores it: around every reference boundary a collar (0.25 s each side by
default) is left out of the scoring, since where a turn begins is uncertain by about that much; the
hypothesis's speakers are mapped one-to-one onto the reference's so as to maximise the time they share
(Hungarian assignment); then over the scored steps
    missed      = max(0, n_ref - n_hyp)
    false alarm = max(0, n_hyp - n_ref)
    confusion   = min(n_ref, n_hyp) - n_correct   (n_correct: reference speakers whose mapped label is on)
and DER = (missed + false alarm + confusion) / reference speech, all in speaker-seconds.

Identity accuracy asks whether the library knows people across footage: the hypothesis labels are
library-wide voice ids, one one-to-one mapping of voices to people is taken over all footage together,
and the score is the share of scored reference speaker-time whose person's mapped voice is on at that
moment (missed speech counts as wrong).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

STEP = 0.01
COLLAR = 0.25

Segment = tuple[str, float, float]  # (speaker, start, end) in seconds


@dataclass(frozen=True)
class DerParts:
    """Speaker-seconds of each error kind and of scored reference speech."""

    scored: float
    missed: float
    false_alarm: float
    confusion: float

    @property
    def der(self) -> float:
        return (self.missed + self.false_alarm + self.confusion) / self.scored if self.scored else 0.0

    def __add__(self, other: DerParts) -> DerParts:
        return DerParts(
            self.scored + other.scored,
            self.missed + other.missed,
            self.false_alarm + other.false_alarm,
            self.confusion + other.confusion,
        )


def _grid(segments: Sequence[Segment], steps: int) -> tuple[list[str], np.ndarray]:
    """Speakers (sorted) and a boolean (speakers, steps) activity matrix."""
    names = sorted({s for s, _, _ in segments})
    active = np.zeros((len(names), steps), bool)
    index = {n: i for i, n in enumerate(names)}
    for speaker, start, end in segments:
        a, b = max(0, round(start / STEP)), min(steps, round(end / STEP))
        if b > a:
            active[index[speaker], a:b] = True
    return names, active


def _scored_mask(reference: Sequence[Segment], steps: int, collar: float) -> np.ndarray:
    scored = np.ones(steps, bool)
    width = round(collar / STEP)
    if width:
        for _, start, end in reference:
            for edge in (round(start / STEP), round(end / STEP)):
                scored[max(0, edge - width) : max(0, edge + width)] = False
    return scored


def _steps(reference: Sequence[Segment], hypothesis: Sequence[Segment], duration: float | None) -> int:
    end = max([e for _, _, e in [*reference, *hypothesis]] + [duration or 0.0])
    return int(np.ceil(end / STEP)) + 1


def best_mapping(ref_active: np.ndarray, hyp_active: np.ndarray) -> dict[int, int]:
    """hyp row -> ref row, one-to-one, maximising the steps where both are on."""
    if not len(ref_active) or not len(hyp_active):
        return {}
    shared = hyp_active.astype(np.float32) @ ref_active.T.astype(np.float32)
    rows, cols = linear_sum_assignment(-shared)
    return {int(h): int(r) for h, r in zip(rows, cols) if shared[h, r] > 0}


def der_parts(
    reference: Sequence[Segment], hypothesis: Sequence[Segment], collar: float = COLLAR, duration: float | None = None
) -> DerParts:
    """The DER's parts for one recording (see the module's docstring)."""
    steps = _steps(reference, hypothesis, duration)
    _, ref = _grid(reference, steps)
    _, hyp = _grid(hypothesis, steps)
    scored = _scored_mask(reference, steps, collar)
    ref, hyp = ref[:, scored], hyp[:, scored]
    mapping = best_mapping(ref, hyp)
    n_ref = ref.sum(axis=0) if len(ref) else np.zeros(scored.sum(), int)
    n_hyp = hyp.sum(axis=0) if len(hyp) else np.zeros(scored.sum(), int)
    correct = np.zeros_like(n_ref)
    for h, r in mapping.items():
        correct = correct + (hyp[h] & ref[r])
    return DerParts(
        scored=float(n_ref.sum()) * STEP,
        missed=float(np.maximum(0, n_ref - n_hyp).sum()) * STEP,
        false_alarm=float(np.maximum(0, n_hyp - n_ref).sum()) * STEP,
        confusion=float((np.minimum(n_ref, n_hyp) - correct).sum()) * STEP,
    )


def der(reference: Sequence[Segment], hypothesis: Sequence[Segment], collar: float = COLLAR) -> float:
    return der_parts(reference, hypothesis, collar).der


def total_der(pairs: Iterable[tuple[Sequence[Segment], Sequence[Segment]]], collar: float = COLLAR) -> DerParts:
    """The DER over many recordings: each mapped on its own (a voice label means nothing across files),
    the seconds summed."""
    total = DerParts(0.0, 0.0, 0.0, 0.0)
    for reference, hypothesis in pairs:
        total = total + der_parts(reference, hypothesis, collar)
    return total


def identity_accuracy(
    references: Mapping[str, Sequence[Segment]], hypotheses: Mapping[str, Sequence[Segment]], collar: float = COLLAR
) -> tuple[float, dict[str, str]]:
    """The share of scored reference speaker-time that carries its person's voice id, under the best
    one-to-one voice -> person mapping over all recordings together; and that mapping (voice -> person)."""
    people = sorted({s for segs in references.values() for s, _, _ in segs})
    voices = sorted({s for segs in hypotheses.values() for s, _, _ in segs})
    shared = np.zeros((len(voices), len(people)))
    total = 0.0
    for name, reference in references.items():
        hypothesis = hypotheses.get(name, [])
        steps = _steps(reference, hypothesis, None)
        ref_names, ref = _grid(reference, steps)
        hyp_names, hyp = _grid(hypothesis, steps)
        scored = _scored_mask(reference, steps, collar)
        ref, hyp = ref[:, scored], hyp[:, scored]
        total += float(ref.sum()) * STEP
        rows = [voices.index(v) for v in hyp_names]
        cols = [people.index(p) for p in ref_names]
        if len(ref) and len(hyp):
            shared[np.ix_(rows, cols)] += (hyp.astype(np.float32) @ ref.T.astype(np.float32)) * STEP
    if not total:
        return 0.0, {}
    rows, cols = linear_sum_assignment(-shared) if len(voices) and len(people) else ([], [])
    mapping = {voices[r]: people[c] for r, c in zip(rows, cols) if shared[r, c] > 0}
    right = sum(shared[r, c] for r, c in zip(rows, cols))
    return float(right) / total, mapping
