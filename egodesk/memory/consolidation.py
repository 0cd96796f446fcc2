"""Imprint's online memory compression, record by record in time order (pure numpy, no database).

For each incoming interaction record f_t with action-object embedding e_t = Encoder(a_t, o_t):

1. Contextualised embedding. The history H_t is the k previous records' e_j. Only those whose cosine
   similarity to e_t exceeds delta_h contribute; with h_t their mean,
       e~_t = normalise((1 - alpha_h) * e_t + alpha_h * normalise(h_t)),   or e_t when none contributes.
   The paper names k, alpha_h ("context-history weight") and delta_h ("only interactions whose
   similarity exceeds delta_h contribute") but not the formula; this convex blend is our reading:
   alpha_h = 0 ignores history, alpha_h = 1 keeps only history ("over-weighting historical context").
2. Event prototype. e~_t joins its nearest prototype when cos >= delta_g; otherwise a new prototype
   is created, unless the bank holds N_max already: then (as the paper says) it joins its nearest
   prototype anyway, trading granularity for bounded memory. A prototype keeps a recurrence count nu,
   a last-seen time and the running sum of its members' e~ (its direction is the members' mean).
3. Importance
       w(f_t) = log(1 + nu) * exp(-lambda * dT) * 1 / (1 + log(1 + N_t))
   nu counts f_t itself (a new prototype has nu = 1, otherwise every first occurrence would score 0),
   dT is the time from the prototype's previous occurrence to f_t's start (0 for a new prototype:
   there is no previous occurrence), N_t the number of prototypes after the assignment. The record is
   kept when w >= tau.
   Time unit of dT: hours (`time_unit_s` = 3600). The paper does not state it. In seconds or minutes
   exp(-1.14 dT) would drop every repeat more than a few seconds/minutes apart, so frequency could
   never accumulate; in days the recency term would be ~1 within a recording and do nothing. In hours
   a pattern recurring within the same activity keeps most of its weight (0.75 after 15 min, 0.32
   after 1 h) while a pattern not seen for half a day has effectively lost it.
4. Consolidation. A kept record merges into the memory entry whose action-object centroid and context
   centroid are both at cos >= delta_m to e_t and e~_t (the best such entry by the sum of the two);
   otherwise it founds a new entry. Entries keep their members in arrival (= time) order.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field, fields

import numpy as np


@dataclass(frozen=True)
class CompressionParams:
    history_k: int = 5
    alpha_h: float = 0.5
    delta_h: float = 0.3
    delta_g: float = 0.75
    max_prototypes: int = 300
    decay_lambda: float = 1.14
    time_unit_s: float = 3600.0
    tau: float = 0.2
    delta_m: float = 0.75

    @classmethod
    def from_settings(cls, settings) -> CompressionParams:
        """The parameters as the settings give them: each is the setting `imprint_<name>` (the names
        the paper uses), but for `decay_lambda` (`imprint_lambda`)."""
        names = {f.name: f"imprint_{f.name}" for f in fields(cls)} | {"decay_lambda": "imprint_lambda"}
        return cls(**{name: getattr(settings, setting) for name, setting in names.items()})


def normalise(vector: np.ndarray) -> np.ndarray:
    vector = np.asarray(vector, dtype=np.float64)
    norm = np.linalg.norm(vector, axis=-1, keepdims=True)
    return vector / np.maximum(norm, 1e-12)


def contextual_embedding(
    e: np.ndarray, history: list[np.ndarray] | np.ndarray, alpha_h: float, delta_h: float
) -> tuple[np.ndarray, int]:
    """(e~_t, how many history records contributed). `history` holds the previous records' e."""
    e = normalise(e)
    if len(history) == 0:
        return e, 0
    past = normalise(np.asarray(history, dtype=np.float64))
    close = past[past @ e > delta_h]
    if not len(close):
        return e, 0
    h = normalise(close.mean(axis=0))
    return normalise((1.0 - alpha_h) * e + alpha_h * h), len(close)


def importance(nu: int, dt_units: float, n_prototypes: int, decay_lambda: float) -> float:
    """w = log(1 + nu) * exp(-lambda * dT) * 1 / (1 + log(1 + N)); natural logarithms."""
    return math.log1p(nu) * math.exp(-decay_lambda * max(dt_units, 0.0)) / (1.0 + math.log1p(n_prototypes))


@dataclass
class Prototypes:
    """The event prototype bank: running sums of member e~, recurrence counts, last-seen times (s)."""

    dim: int
    sums: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (n, dim)
    counts: list[int] = field(default_factory=list)
    last_seen: list[float] = field(default_factory=list)

    def __post_init__(self):
        if not len(self.sums):
            self.sums = np.zeros((0, self.dim))

    def __len__(self) -> int:
        return len(self.counts)

    def nearest(self, context: np.ndarray) -> tuple[int, float]:
        if not len(self):
            return -1, -1.0
        sims = normalise(self.sums) @ context
        best = int(np.argmax(sims))
        return best, float(sims[best])

    def assign(self, context: np.ndarray, start: float, delta_g: float, cap: int) -> tuple[int, bool, float, float]:
        """(prototype, created, similarity, seconds since its previous occurrence) for one record."""
        best, sim = self.nearest(context)
        if best >= 0 and (sim >= delta_g or len(self) >= cap):
            elapsed = max(0.0, start - self.last_seen[best])
            self.sums[best] += context
            self.counts[best] += 1
            self.last_seen[best] = max(self.last_seen[best], start)
            return best, False, sim, elapsed
        self.sums = np.vstack([self.sums, context[None, :]])
        self.counts.append(1)
        self.last_seen.append(start)
        return len(self) - 1, True, sim, 0.0


class Entries:
    """The compressed memory M: per entry the running sums of its members' e and e~ (their directions
    are the centroids consolidation compares against) and its member count. Rows live in buffers that
    grow by doubling, with the centroids cached, so a step costs one pass over M and no copying."""

    def __init__(
        self,
        dim: int,
        event_sums: np.ndarray | None = None,
        context_sums: np.ndarray | None = None,
        counts: list[int] | None = None,
    ):
        self.dim = dim
        self.counts = list(counts or [])
        n = len(self.counts)
        self._sums = np.zeros((2, max(16, 2 * n), dim))  # [event, context] x rows x dim
        self._centroids = np.zeros_like(self._sums)
        if n:
            self._sums[0, :n], self._sums[1, :n] = event_sums, context_sums
        for row in range(n):
            self._refresh(row)

    def __len__(self) -> int:
        return len(self.counts)

    @property
    def event_sums(self) -> np.ndarray:
        return self._sums[0, : len(self)]

    @property
    def context_sums(self) -> np.ndarray:
        return self._sums[1, : len(self)]

    def _refresh(self, row: int) -> None:
        self._centroids[:, row] = normalise(self._sums[:, row])

    def match(self, e: np.ndarray, context: np.ndarray, delta_m: float) -> tuple[int, float, float]:
        """(entry, action-object similarity, context similarity) of the best entry meeting both
        thresholds, or (-1, best similarities seen) when none does."""
        n = len(self)
        if not n:
            return -1, -1.0, -1.0
        sim_e = self._centroids[0, :n] @ e
        sim_c = self._centroids[1, :n] @ context
        both = (sim_e >= delta_m) & (sim_c >= delta_m)
        if not both.any():
            return -1, float(sim_e.max()), float(sim_c.max())
        best = int(np.argmax(np.where(both, sim_e + sim_c, -np.inf)))
        return best, float(sim_e[best]), float(sim_c[best])

    def add(self, index: int, e: np.ndarray, context: np.ndarray) -> int:
        """Add a member to entry `index`, or found a new entry when index < 0; returns the entry."""
        if index < 0:
            index = len(self)
            if index == self._sums.shape[1]:
                self._sums = np.concatenate([self._sums, np.zeros_like(self._sums)], axis=1)
                self._centroids = np.concatenate([self._centroids, np.zeros_like(self._centroids)], axis=1)
            self.counts.append(0)
        self._sums[0, index] += e
        self._sums[1, index] += context
        self._refresh(index)
        self.counts[index] += 1
        return index


@dataclass(frozen=True)
class Decision:
    """What compression did with one record (stored with the record for inspection)."""

    context: np.ndarray
    history_used: int
    prototype: int
    prototype_created: bool
    prototype_similarity: float
    nu: int
    dt_units: float
    n_prototypes: int
    importance: float
    kept: bool
    entry: int  # -1 when dropped
    entry_created: bool
    entry_similarity: tuple[float, float]  # (action-object, context) to the chosen or nearest entry


class OnlineCompressor:
    """The stateful stream: feed records in time order with `step`; the state (prototypes, entries,
    history) can be saved and restored between batches so a build resumes exactly."""

    def __init__(
        self,
        params: CompressionParams,
        dim: int,
        prototypes: Prototypes | None = None,
        entries: Entries | None = None,
        history: list[np.ndarray] | None = None,
    ):
        self.params = params
        self.prototypes = prototypes or Prototypes(dim)
        self.entries = entries or Entries(dim)
        # stored e's are unit vectors already: normalising again would move their last bits and a resumed
        # stream would drift from an uninterrupted one
        self.history: deque[np.ndarray] = deque(
            (np.asarray(h, dtype=np.float64) for h in (history or [])), maxlen=max(params.history_k, 1)
        )

    def step(self, e: np.ndarray, start: float) -> Decision:
        p = self.params
        e = normalise(e)
        history = list(self.history) if p.history_k > 0 else []
        context, used = contextual_embedding(e, history, p.alpha_h, p.delta_h)
        self.history.append(e)
        proto, created, proto_sim, elapsed = self.prototypes.assign(context, start, p.delta_g, p.max_prototypes)
        nu, n = self.prototypes.counts[proto], len(self.prototypes)
        dt_units = elapsed / p.time_unit_s
        w = importance(nu, dt_units, n, p.decay_lambda)
        kept = w >= p.tau
        entry, entry_created, sims = -1, False, (-1.0, -1.0)
        if kept:
            match, sim_e, sim_c = self.entries.match(e, context, p.delta_m)
            entry_created = match < 0
            entry = self.entries.add(match, e, context)
            sims = (sim_e, sim_c)
        return Decision(context, used, proto, created, proto_sim, nu, dt_units, n, w, kept, entry, entry_created, sims)

    def history_matrix(self) -> np.ndarray:
        """The recent events' embeddings, a row each; none before the first record (a footage whose
        first batches yield no record)."""
        if not self.history:
            return np.zeros((0, 0))
        return np.asarray(list(self.history), dtype=np.float64).reshape(len(self.history), -1)
