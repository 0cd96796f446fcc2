"""`auto`: the combination that measured best (benchmarks/strategy_table.py). Questions with
temporal intent ("last time", "right after", "yesterday", "usually") or asking when something
happened go to the time-aware strategy: on epic-dev's repeated-action questions it puts the one right
occurrence first 95% of the time where hybrid manages 25%, and on LoCoMo's "when did..." questions
its cue-word coverage beats plain fusion. The rest go to `context` (dense + BM25 over the parents with
neighbour smoothing), which lifts LoCoMo Hit@5 from hybrid's 0.44 to 0.62 (strict overlap). The
routing was chosen on LoCoMo's first 500 questions and held on the next 500 (auto 0.668 against
context 0.656 and timeaware 0.590). Each falls back to what the library has built.

The LLM reranker (Parent-Rerank) is left out: with llm-quality on 2 cores it lifts hybrid's Hit@1 from
0.270 to 0.475 on epic-dev and from 0.192 to 0.318 on LoCoMo, but judging costs 11 s (epic-dev) and 18 s
(LoCoMo) a question (p50), about as much as the answer, and this routing still answers as well or better:
epic-dev accuracy 0.585 against 0.920, LoCoMo Hit@5 0.556 against 0.636 and F1 0.322 against 0.326
(`egodesk eval BENCH --strategy rerank --k 8 --answer --limit 200` on both benchmarks).
"""

from __future__ import annotations

from egodesk.core.types import Evidence
from egodesk.retrieval.base import Query, Strategy, make_strategy, register

FALLBACKS = ("context", "hybrid", "parent", "flat", "timeaware")


@register
class Auto(Strategy):
    name = "auto"

    def choose(self, query: Query) -> str:
        qa = query.analysis
        temporal = bool(qa.order or qa.relation or qa.window or qa.habit or qa.asks_when)
        order = ("timeaware", *FALLBACKS) if temporal else FALLBACKS
        for name in order:
            if make_strategy(name, self.memory).available():
                return name
        return FALLBACKS[0]

    def available(self) -> bool:
        return any(make_strategy(n, self.memory).available() for n in FALLBACKS)

    def retrieve(self, query: Query) -> list[Evidence]:
        chosen = self.choose(query)
        evidence = make_strategy(chosen, self.memory).retrieve(query)
        for ev in evidence:
            ev.strategy = f"auto:{chosen}"
        return evidence
