"""EgoCITE's time-aware retrieval: relevance = semantic relevance x time relevance, several rounds
into an evidence pool, then chronological curation by the question's temporal intent.

Views: the four atomic memory views (action, utterance, activity, conversation) when they are built,
else captions and transcripts. Rounds (at most `timeaware_rounds`):
  1. the question with its options, over every view, dense and BM25;
  2. a drafted query, the question's event without scaffolding ("take paper"), over the same views;
  3. for "first/last time", the drafted query inside a window drafted from the pool: after the latest
     occurrence found so far (before the earliest), equal scores broken by recency (earliness), so
     the newest of a thousand identical "I take paper." is found; for "what next/before", the
     units around the chosen occurrence.
Curation (the sampling agent): "last time" puts the latest occurrences of the event first, "first time"
the earliest, "right after" the units that follow the chosen occurrence, "usually" spreads the
evidence over different days; everything else is ranked by score. When the chosen occurrence holds
the event's words and is a first or last occurrence, it (with the unit right after or before it,
for "what next") is pinpointed: the answerer reads only that moment. Handed all k units in time
order, a 1.5B model loses the one occurrence among the repeats, and handed the next two units it
often names the second.

The time window a question names ("yesterday afternoon", "between 17:26 and 17:27") is EgoCITE's time
relevance taken strictly: `Memory.scope` keeps every round inside it, as it does for every strategy.
"""

from __future__ import annotations

import re

import numpy as np

from egodesk.core.types import Evidence
from egodesk.core.words import MIN_COVERAGE, cue_coverage, cue_words
from egodesk.retrieval.base import Memory, Query, Strategy
from egodesk.retrieval.catalog import PARENT_KINDS, Catalog
from egodesk.retrieval.people import HeardPerson, footage_of, people_asked_about
from egodesk.retrieval.question import QuestionAnalysis

ATOMIC_VIEWS = ("action", "utterance", "activity", "conversation")
POOL_PER_VIEW = 36
MATCH_MARGIN = 0.05  # semantic matches: within this of the best, when no unit holds half the cue words
NEIGHBOURS = 2  # units right after (before) the chosen occurrence ranked at the top for "what next"
PINPOINTED_NEIGHBOURS = 1  # of those, the one "right after" names: the answer reads it and the occurrence


def views(memory: Memory) -> list[tuple[str, str, str | None]]:
    """(space, kind, view) triples to search: the atomic views if built, else captions/transcripts."""
    atomic: list[tuple[str, str, str | None]] = [(f"atomic-{v}", "atomic", v) for v in ATOMIC_VIEWS if memory.has(f"atomic-{v}")]
    return atomic or [(kind, kind, None) for kind in PARENT_KINDS if memory.has(kind)]


def coverage(catalog: Catalog, rows: np.ndarray, cues: frozenset[str]) -> np.ndarray:
    """Share of the cue words each unit's text holds."""
    return np.array([cue_coverage(cues, catalog.text[r]) for r in rows], dtype=float)


class TimeAware(Strategy):
    name = "timeaware"

    def available(self) -> bool:
        return bool(views(self.memory))

    def _search(self, text: str, allowed: np.ndarray, searched, tiebreak: np.ndarray | None = None) -> set[int]:
        """Dense and BM25 top units of every view for `text`, within the allowed rows."""
        memory, catalog = self.memory, self.memory.catalog()
        found: set[int] = set()
        for space, kind, view in searched:
            part = allowed & catalog.mask(kinds=[kind], views=[view] if view else None)
            if part.any():
                lexical = memory.lexical([kind], [view] if view else None)
                found.update(r for r, _ in memory.dense(space, memory.embed(text), POOL_PER_VIEW, part))
                found.update(r for r, _ in lexical.search(text, POOL_PER_VIEW, part, tiebreak))
        return found

    def retrieve(self, query: Query) -> list[Evidence]:
        memory, catalog, qa = self.memory, self.memory.catalog(), query.analysis
        searched = views(memory)
        kinds = sorted({kind for _, kind, _ in searched})
        scope = memory.scope(query, kinds, [v for _, _, v in searched if v] or None)
        drafted = qa.anchor or qa.focus or query.question
        cues = cue_words(drafted)
        rounds = memory.settings.timeaware_rounds
        pool = self._search(query.text, scope, searched)  # round 1: the question and its options
        people = people_asked_about(memory.store, query) if qa.order or qa.relation else []
        if rounds >= 2:  # round 2: the drafted query (the event itself), and where the people named were
            pool |= self._search(drafted, scope, searched)
            if people:
                pool |= self._search(drafted, scope & catalog.mask(footage=footage_of(people)), searched)
        if rounds >= 3 and qa.order and pool:
            # Round 3: a window drafted from the pool: after the latest occurrence found so far ("last
            # time"), before the earliest ("first time"), where a newer/older one may still hide.
            rows = np.array(sorted(pool), dtype=np.int64)
            cover = coverage(catalog, rows, cues)
            if cover.max() >= MIN_COVERAGE:
                times = catalog.start[rows[cover >= cover.max() - 1e-9]]
                last = qa.order == "last"
                beyond = catalog.start > times.max() if last else catalog.start < times.min()
                # A repeated action scores the same every time: among equals, the latest (earliest) first.
                pool |= self._search(drafted, scope & beyond, searched, -catalog.start if last else catalog.start)
        rows = np.array(sorted(pool), dtype=np.int64)
        if not len(rows):
            return []
        semantic = self._semantic(query, drafted, rows, searched)
        cover = coverage(catalog, rows, cues)
        relevance = semantic + 0.3 * cover
        among = with_people(catalog, rows, people) if people else None
        ranked, pinpointed = self._curate(query, qa, rows, relevance, cover, semantic, kinds, rounds, among)
        out = []
        for position, (row, score) in enumerate(ranked[: query.k], start=1):
            i = int(np.searchsorted(rows, row))
            found = i < len(rows) and rows[i] == row
            out.append(
                catalog.evidence(
                    row,
                    score,
                    self.name,
                    ranks={"timeaware": position},
                    pinpointed=row in pinpointed,
                    role=pinpointed.get(row, ""),
                    scores={"semantic": float(semantic[i]) if found else 0.0, "coverage": float(cover[i]) if found else 0.0},
                )
            )
        return out

    def _semantic(self, query: Query, drafted: str, rows: np.ndarray, searched) -> np.ndarray:
        """Cosine of each pooled unit to the question (with options) and to the drafted query: the max."""
        memory, catalog = self.memory, self.memory.catalog()
        out = np.zeros(len(rows))
        position = {int(r): i for i, r in enumerate(rows)}
        allowed = np.zeros(len(catalog), dtype=bool)
        allowed[rows] = True
        for space, kind, view in searched:
            part = allowed & catalog.mask(kinds=[kind], views=[view] if view else None)
            count = int(part.sum())
            if not count:
                continue
            for text in {query.text, drafted}:
                for row, cos in memory.dense(space, memory.embed(text), count, part):
                    out[position[row]] = max(out[position[row]], cos)
        return out

    def _curate(
        self,
        query: Query,
        qa: QuestionAnalysis,
        rows: np.ndarray,
        relevance: np.ndarray,
        cover: np.ndarray,
        semantic: np.ndarray,
        kinds: list[str],
        rounds: int,
        among: np.ndarray | None = None,
    ) -> tuple[list[tuple[int, float]], dict[int, str]]:
        """The ranking, and the rows pinpointed as the moment asked about with their `Evidence.role`
        (none when no occurrence holds the event's words: a semantic near-match is not sure enough to
        hide the rest). `among`: the rows that may be occurrences (the people named were there)."""
        catalog = self.memory.catalog()
        by_score = [(int(rows[i]), float(relevance[i])) for i in np.lexsort((rows, -relevance))]
        if qa.habit and not (qa.order or qa.relation):
            return _spread_over_days(catalog, by_score), {}
        if not (qa.order or qa.relation):
            return by_score, {}
        if among is not None:
            if not among.any():
                return by_score, {}
            cover, semantic = np.where(among, cover, 0.0), np.where(among, semantic, -np.inf)
        # The occurrences of the event: the units holding the most of its words ("put down cup" for
        # "put down cup and spoon"), else, when none holds half, the semantic near-best.
        most = float(cover.max())
        if most >= MIN_COVERAGE:
            full = np.flatnonzero(cover >= most - 1e-9)
        else:
            full = np.flatnonzero(semantic >= semantic.max() - MATCH_MARGIN)
        occurrences = sorted(full.tolist(), key=lambda i: (catalog.start[rows[i]], rows[i]), reverse=qa.order != "first")
        if qa.order is None:  # "what did I do after X": the best-scoring occurrence
            occurrences.sort(key=lambda i: -relevance[i])
        top_score = float(relevance.max()) + 1.0
        head: list[tuple[int, float]] = []
        anchor = int(rows[occurrences[0]])
        if qa.relation and rounds >= 3:
            head.append((anchor, top_score))
            for step, row in enumerate(
                catalog.neighbours(anchor, kinds, qa.relation == "after", NEIGHBOURS, before=query.cutoff)
            ):
                head.append((row, top_score - 0.01 * (step + 1)))
            beside = [row for row, _ in head[1 : 1 + PINPOINTED_NEIGHBOURS]]
            moment = {anchor: "anchor" if beside else "", **dict.fromkeys(beside, qa.relation or "")}
        else:
            limit = max(1, query.k // 2)
            head = [(int(rows[i]), top_score - 0.01 * n) for n, i in enumerate(occurrences[:limit])]
            moment = {anchor: ""}
        taken = {row for row, _ in head}
        # Only a first/last occurrence is one moment; "after X" alone may mean any of X's repeats.
        sure = qa.order is not None and most >= MIN_COVERAGE
        return head + [(row, score) for row, score in by_score if row not in taken], moment if sure else {}


def with_people(catalog: Catalog, rows: np.ndarray, people: list[HeardPerson]) -> np.ndarray:
    """Which rows the named people were at: in footage where they were heard or seen, or naming them
    (a voice missed by diarization still leaves its name in the lines)."""
    footage = np.fromiter(footage_of(people), dtype=np.int64)
    names = re.compile(r"\b(?:" + "|".join(re.escape(p.name) for p in people) + r")\b", re.I)
    return np.isin(catalog.footage[rows], footage) | np.array([bool(names.search(catalog.text[r])) for r in rows], dtype=bool)


def _spread_over_days(catalog: Catalog, ranked: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """Round-robin over days, best first within each: habit questions need several days' evidence."""
    days: dict[int, list[tuple[int, float]]] = {}
    for row, score in ranked:
        days.setdefault(int(catalog.start[row] // 86400), []).append((row, score))
    order = sorted(days.values(), key=lambda items: -items[0][1])
    out = []
    for depth in range(max(len(items) for items in order)):
        out += [items[depth] for items in order if depth < len(items)]
    return out
