"""Imprint's retrieval over consolidated interaction memories.

Only memories that started before the question count (M_q). Each is scored
    s = 0.53 cos(object) + 0.29 cos(action) + 0.18 w
with the question's object and action cues embedded by the same encoder as the memories' object and
action fields, and w the memory's importance. The top 5 go on, each as the interactions it held when
the question was asked: an entry that began before the question may have grown after it, and its
later members are not yet memory. A time window ("before lunch", "yesterday") keeps the entries
inside it first when any are. "First time" / "last time" select the earliest / latest matching
interaction among those entries' members (the one holding most of the event's words), and "right
after" / "right before" add the interaction recorded next to it; that moment is pinpointed, so the
answerer reads it alone rather than one long entry whose members span minutes of repeats.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from egodesk.core.types import Evidence
from egodesk.retrieval.base import Query, Strategy, register
from egodesk.retrieval.question import MIN_COVERAGE, cue_coverage, cue_words

OBJECT_SPACE = "record-object"
ACTION_SPACE = "record-action"
ENTRY, RECORD = "memory-entry", "record"
POOL = 200  # nearest by object and by action, scored exactly


@register
class Records(Strategy):
    name = "records"
    spaces = (OBJECT_SPACE, ACTION_SPACE)

    def retrieve(self, query: Query) -> list[Evidence]:
        memory, catalog, qa, settings = self.memory, self.memory.catalog(), query.analysis, self.memory.settings
        kinds = [ENTRY] if catalog.mask(kinds=[ENTRY]).any() else [RECORD]
        cutoff = min(t for t in (query.cutoff, query.asked_at, float("inf")) if t is not None)
        scope = memory.scope(query, kinds, before=None if cutoff == float("inf") else cutoff)
        if not scope.any():
            return []
        obj_text = " ".join(qa.objects) or qa.focus or query.question
        act_text = " ".join(qa.actions) or qa.focus or query.question
        pool = {r for r, _ in memory.dense(OBJECT_SPACE, memory.embed(obj_text), POOL, scope)}
        pool |= {r for r, _ in memory.dense(ACTION_SPACE, memory.embed(act_text), POOL, scope)}
        rows = np.array(sorted(pool), dtype=np.int64)
        if not len(rows):
            return []
        in_pool = np.zeros(len(catalog), dtype=bool)
        in_pool[rows] = True
        cos_o = dict(memory.dense(OBJECT_SPACE, memory.embed(obj_text), len(rows), in_pool))
        cos_a = dict(memory.dense(ACTION_SPACE, memory.embed(act_text), len(rows), in_pool))
        importance = {int(r): float((catalog.meta[r] or {}).get("importance", 0.0)) for r in rows}
        scored = sorted(((int(r), settings.records_w_object * cos_o.get(int(r), 0.0) + settings.records_w_action * cos_a.get(int(r), 0.0)
                          + settings.records_w_importance * importance[int(r)]) for r in rows), key=lambda x: (-x[1], x[0]))
        top = self._in_window_first(query, scored[: max(settings.records_top_k, query.k)])
        found = [self._as_of(catalog.evidence(row, score, self.name, scores={"object": cos_o.get(row, 0.0), "action": cos_a.get(row, 0.0),
                                                                               "importance": importance[row]}), cutoff)
                 for row, score in top]
        if qa.order in ("first", "last"):
            head = found[: settings.records_top_k]
            occurrence = self._occurrence(query, head, cutoff)
            if not occurrence:  # no member holds the event's words: the earliest (latest) entries first
                head.sort(key=lambda ev: ev.start, reverse=qa.order == "last")
            found = occurrence + head + found[len(head):]
        return _unique(found)[: query.k]

    def _in_window_first(self, query: Query, top: list[tuple[int, float]]) -> list[tuple[int, float]]:
        catalog, window = self.memory.catalog(), query.analysis.window
        if window is None:
            return top
        inside = [(r, s) for r, s in top if window.contains(catalog.start[r], catalog.end[r])]
        return inside + [(r, s) for r, s in top if (r, s) not in inside] if inside else top

    def _members(self, entry: Evidence, cutoff: float) -> list[dict]:
        """The entry's member interactions that began before the cutoff, in time order (a bare
        record is its own one member)."""
        catalog = self.memory.catalog()
        row = catalog.row(entry.unit_id)
        members = (catalog.meta[row] or {}).get("members") if row is not None else None
        if not members:
            return [{"record": entry.unit_id, "start": entry.start, "end": entry.end, "text": entry.text}]
        return [m for m in members if m["start"] < cutoff]

    def _as_of(self, entry: Evidence, cutoff: float) -> Evidence:
        """The entry as it stood at the cutoff: the members recorded by then, and their span."""
        members = self._members(entry, cutoff)
        if not members:
            return entry
        return replace(entry, start=min(m["start"] for m in members), end=max(m["end"] for m in members),
                       text="; ".join(dict.fromkeys(m["text"] for m in members)))

    def _occurrence(self, query: Query, entries: list[Evidence], cutoff: float) -> list[Evidence]:
        """The earliest / latest interaction of the event among the entries' members, pinpointed,
        with the interaction right after (before) it when the question asks what came next (before).
        Nothing when no member holds enough of the event's words."""
        catalog, qa = self.memory.catalog(), query.analysis
        cues = cue_words(qa.anchor or qa.focus or query.question)
        members = [m for entry in entries for m in self._members(entry, cutoff)]
        if not cues or not members:
            return []
        cover = [cue_coverage(cues, m["text"]) for m in members]
        best = max(cover)
        if best < MIN_COVERAGE:
            return []
        matching = [m for m, c in zip(members, cover) if c >= best - 1e-9]
        chosen = (min if qa.order == "first" else max)(matching, key=lambda m: (m["start"], m["record"]))
        anchor = catalog.row(chosen["record"])
        if anchor is None:
            return []
        score = max(ev.score for ev in entries) + 1.0
        moment = [anchor]
        if qa.relation:
            moment += catalog.neighbours(anchor, [RECORD], qa.relation == "after", 1, before=cutoff)
        return [catalog.evidence(row, score - 0.01 * step, self.name, pinpointed=True) for step, row in enumerate(moment)]


def _unique(found: list[Evidence]) -> list[Evidence]:
    """Each unit once, at its first place (without consolidation the pinpointed record is also one of
    the top records)."""
    out: dict[int, Evidence] = {}
    for ev in found:
        out.setdefault(ev.unit_id, ev)
    return list(out.values())
