"""Imprint's retrieval over consolidated interaction memories.

Only memories that started before the question count (M_q). Each is scored
    s = 0.53 cos(object) + 0.29 cos(action) + 0.18 w
with the question's object and action cues embedded by the same encoder as the memories' object and
action fields, and w the memory's importance. The top 5 go on; "first time" / "last time" then keep
the earliest / latest of them first, and a time window ("before lunch", "yesterday") keeps those
inside it when any are.
"""

from __future__ import annotations

import numpy as np

from egodesk.core.types import Evidence
from egodesk.retrieval.base import Query, Strategy, register

OBJECT_SPACE = "record-object"
ACTION_SPACE = "record-action"
KINDS = ("memory-entry", "record")
POOL = 200  # nearest by object and by action, scored exactly


@register
class Records(Strategy):
    name = "records"
    spaces = (OBJECT_SPACE, ACTION_SPACE)

    def retrieve(self, query: Query) -> list[Evidence]:
        memory, catalog, qa, settings = self.memory, self.memory.catalog(), query.analysis, self.memory.settings
        consolidated = catalog.mask(kinds=[KINDS[0]])
        kinds = [KINDS[0]] if consolidated.any() else [KINDS[1]]
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
        top = scored[: max(settings.records_top_k, query.k)]
        top = self._temporal_filter(query, top)
        return [catalog.evidence(row, score, self.name, scores={"object": cos_o.get(row, 0.0), "action": cos_a.get(row, 0.0),
                                                                "importance": importance[row]})
                for row, score in top[: query.k]]

    def _temporal_filter(self, query: Query, top: list[tuple[int, float]]) -> list[tuple[int, float]]:
        catalog, qa = self.memory.catalog(), query.analysis
        if qa.window is not None:
            inside = [(r, s) for r, s in top if qa.window.contains(catalog.start[r], catalog.end[r])]
            top = inside + [(r, s) for r, s in top if (r, s) not in inside] if inside else top
        if qa.order in ("first", "last"):
            head = top[: self.memory.settings.records_top_k]
            head.sort(key=lambda x: catalog.start[x[0]], reverse=qa.order == "last")
            top = head + top[len(head):]
        return top
