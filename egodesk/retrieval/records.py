"""Imprint's retrieval over consolidated interaction memories.

Only memories that started before the question count (M_q). Each is scored
    s = 0.53 cos(object) + 0.29 cos(action) + 0.18 w
with the question's object and action cues embedded by the same encoder as the memories' object and
action fields, and w the memory's importance. The top 5 go on as the interactions they held when the
question was asked (an entry that began before the question may have grown after it, and its later
members are not yet memory), each member a piece of evidence with its own time: an entry of a
recurring interaction spans days or months, and handing it on as one span would send the player to
its first occurrence and date every member by it. The members holding more of the question's words
come first (a consolidated entry gathers interactions whose object and action fields are alike: what
sets one apart is often only in its words, such as the line said), and among equals the entries take
turns, each entry's members ranked by the same score over their own object and action (the latest
first on a tie). A time window ("before lunch", "yesterday") keeps only the members inside it.
"First time" / "last time" select the earliest / latest matching interaction among the top entries'
members (the one holding most of the event's words), and "right after" / "right before" add the
interaction recorded next to it; that moment is pinpointed, so the answerer reads it alone.
"""

from __future__ import annotations

import numpy as np

from egodesk.core.types import Evidence
from egodesk.core.words import MIN_COVERAGE, cue_coverage, cue_words
from egodesk.retrieval.base import Query, Strategy

OBJECT_SPACE = "record-object"
ACTION_SPACE = "record-action"
ENTRY, RECORD = "memory-entry", "record"
POOL = 200  # nearest by object and by action, scored exactly


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
        object_vector = memory.embed(" ".join(qa.objects) or qa.focus or query.question)
        action_vector = memory.embed(" ".join(qa.actions) or qa.focus or query.question)
        pool = {r for r, _ in memory.dense(OBJECT_SPACE, object_vector, POOL, scope)}
        pool |= {r for r, _ in memory.dense(ACTION_SPACE, action_vector, POOL, scope)}
        rows = np.array(sorted(pool), dtype=np.int64)
        if not len(rows):
            return []
        in_pool = np.zeros(len(catalog), dtype=bool)
        in_pool[rows] = True
        cos_o = dict(memory.dense(OBJECT_SPACE, object_vector, len(rows), in_pool))
        cos_a = dict(memory.dense(ACTION_SPACE, action_vector, len(rows), in_pool))
        importance = {int(r): _importance(catalog, r) for r in rows}
        scored = sorted(
            ((int(r), self._score(cos_o.get(int(r), 0.0), cos_a.get(int(r), 0.0), importance[int(r)])) for r in rows),
            key=lambda x: (-x[1], x[0]),
        )
        entries = [
            catalog.evidence(
                row,
                score,
                self.name,
                scores={"object": cos_o.get(row, 0.0), "action": cos_a.get(row, 0.0), "importance": importance[row]},
            )
            for row, score in scored[: max(settings.records_top_k, query.k)]
        ]
        cues = cue_words(qa.focus or query.question)
        members = self._in_window(query, self._ranked_members(entries, cutoff, cues, object_vector, action_vector))
        if qa.order in ("first", "last"):
            head = entries[: settings.records_top_k]
            occurrence = self._occurrence(query, head, cutoff)
            if not occurrence:  # no member holds the event's words: the earliest (latest) of the top entries' first
                in_head = sorted(
                    (ev for ev, entry in members if entry < len(head)), key=lambda ev: ev.start, reverse=qa.order == "last"
                )
                return _unique(in_head + [ev for ev, entry in members if entry >= len(head)])[: query.k]
            return _unique(occurrence + [ev for ev, _ in members])[: query.k]
        return _unique([ev for ev, _ in members])[: query.k]

    def _score(self, cos_object: float, cos_action: float, importance: float) -> float:
        w = self.memory.settings
        return w.records_w_object * cos_object + w.records_w_action * cos_action + w.records_w_importance * importance

    @staticmethod
    def _in_window(query: Query, members: list[tuple[Evidence, int]]) -> list[tuple[Evidence, int]]:
        """An entry overlapping the question's window may hold members outside it: those are dropped."""
        window = query.window
        return members if window is None else [m for m in members if window.contains(m[0].start, m[0].end)]

    def _members(self, entry: Evidence, cutoff: float) -> list[dict]:
        """The entry's member interactions that began before the cutoff, in time order (a bare
        record is its own one member)."""
        catalog = self.memory.catalog()
        row = catalog.row(entry.unit_id)
        members = (catalog.meta[row] or {}).get("members") if row is not None else None
        if not members:
            return [{"record": entry.unit_id, "start": entry.start, "end": entry.end, "text": entry.text}]
        return [m for m in members if m["start"] < cutoff]

    def _ranked_members(
        self, entries: list[Evidence], cutoff: float, cues: frozenset[str], object_vector: np.ndarray, action_vector: np.ndarray
    ) -> list[tuple[Evidence, int]]:
        """Each entry's members before the cutoff as evidence of their own, paired with their entry's
        place, in the order the module docstring gives. A bare record stays as it is."""
        catalog = self.memory.catalog()
        by_entry: list[list[int]] = []
        for entry in entries:
            found = [catalog.row(m["record"]) for m in self._members(entry, cutoff)]
            by_entry.append([r for r in found if r is not None])
        allowed = np.zeros(len(catalog), dtype=bool)
        allowed[[r for rows in by_entry for r in rows]] = True
        n = int(allowed.sum())
        cos_o = dict(self.memory.dense(OBJECT_SPACE, object_vector, n, allowed)) if n else {}
        cos_a = dict(self.memory.dense(ACTION_SPACE, action_vector, n, allowed)) if n else {}
        ranked: list[tuple[float, int, int, Evidence]] = []  # (words held, turn, entry's place, evidence)
        for place, (entry, rows) in enumerate(zip(entries, by_entry)):
            if not rows or rows == [catalog.row(entry.unit_id)]:
                ranked.append((cue_coverage(cues, entry.text), 0, place, entry))
                continue
            own = {
                r: {"object": cos_o.get(r, 0.0), "action": cos_a.get(r, 0.0), "importance": _importance(catalog, r)} for r in rows
            }
            held = {r: cue_coverage(cues, catalog.text[r]) for r in rows}
            order = sorted(
                rows,
                key=lambda r: (
                    -held[r],
                    -self._score(own[r]["object"], own[r]["action"], own[r]["importance"]),
                    -catalog.start[r],
                    r,
                ),
            )
            ranked += [
                (held[r], turn, place, catalog.evidence(r, entry.score, self.name, scores={"entry": entry.score, **own[r]}))
                for turn, r in enumerate(order)
            ]
        ranked.sort(key=lambda x: (-x[0], x[1], x[2]))
        return [(ev, place) for _, _, place, ev in ranked]

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
        roles = ["anchor" if len(moment) > 1 else "", *[qa.relation or ""] * (len(moment) - 1)]
        return [
            catalog.evidence(row, score - 0.01 * step, self.name, pinpointed=True, role=role)
            for step, (row, role) in enumerate(zip(moment, roles))
        ]


def _importance(catalog, row: int) -> float:
    return float((catalog.meta[row] or {}).get("importance", 0.0))


def _unique(found: list[Evidence]) -> list[Evidence]:
    """Each unit once, at its first place (without consolidation the pinpointed record is also one of
    the top records)."""
    out: dict[int, Evidence] = {}
    for ev in found:
        out.setdefault(ev.unit_id, ev)
    return list(out.values())
