"""One question, start to finish: retrieve with a strategy, answer from the evidence."""

from __future__ import annotations

import time
from datetime import datetime

from egodesk.core.settings import Settings
from egodesk.core.timeutil import to_ts
from egodesk.core.types import Answer
from egodesk.memory.indices import IndexManager
from egodesk.memory.store import Store
from egodesk.reasoning.answerer import answer_question
from egodesk.retrieval.base import Memory, Query, make_strategy


def ask(store: Store, index_manager: IndexManager, embedder, llm, question: str, options: list[str] | None = None,
        asked_at: float | None = None, strategy: str = "auto", k: int = 12, sources=None, settings: Settings | None = None,
        memory: Memory | None = None) -> Answer:
    """Answer `question` from the library. `asked_at` defaults to now; memory from after it is not used.
    Pass a long-lived `memory` (the GUI does) to keep its caches between questions."""
    memory = memory or Memory(store, index_manager, embedder, llm=llm, settings=settings)
    asked_at = to_ts(datetime.now()) if asked_at is None else asked_at  # wall-clock seconds, as stored
    started = time.perf_counter()
    evidence = make_strategy(strategy, memory).retrieve(Query(question, options, asked_at, sources, k, cutoff=asked_at))
    retrieval_s = time.perf_counter() - started
    answer = answer_question(llm, question, evidence, options, asked_at, memory.settings.answer_context_tokens)
    answer.timings["retrieval_s"] = retrieval_s
    answer.extra["strategy"] = strategy
    return answer
