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

# A longer question (a pasted text, say) is cut to its start and its end, where the actual question
# usually is: retrieval reads about what the embedder would (256 word pieces), and the prompt stays
# inside the model's context next to the evidence budget (1,500 tokens by default, of 4,096). The
# answerer's own cap (head only) is longer, so it leaves the end in place.
QUESTION_CHARS = 800
QUESTION_TOKENS = 300


def shorten(question: str, count_tokens) -> str:
    """The question on one line, cut to QUESTION_CHARS characters and QUESTION_TOKENS tokens."""
    text = " ".join(question.split())
    limit = min(len(text), QUESTION_CHARS)
    while True:
        head = limit * 2 // 3
        cut = text if limit >= len(text) else f"{text[:head]} … {text[len(text) - max(0, limit - head - 3):]}"
        tokens = count_tokens(cut)
        if tokens <= QUESTION_TOKENS or limit <= 16:
            return cut
        limit = limit * QUESTION_TOKENS * 9 // (tokens * 10)  # CJK text runs about a token a character


def ask(store: Store, index_manager: IndexManager, embedder, llm, question: str, options: list[str] | None = None,
        asked_at: float | None = None, strategy: str = "auto", k: int = 12, sources=None, settings: Settings | None = None,
        memory: Memory | None = None) -> Answer:
    """Answer `question` from the library. `asked_at` defaults to now; memory from after it is not used.
    Pass a long-lived `memory` (the GUI does) to keep its caches between questions."""
    memory = memory or Memory(store, index_manager, embedder, llm=llm, settings=settings)
    asked_at = to_ts(datetime.now()) if asked_at is None else asked_at  # wall-clock seconds, as stored
    short = shorten(question, llm.count_tokens)
    started = time.perf_counter()
    evidence = make_strategy(strategy, memory).retrieve(Query(short, options, asked_at, sources, k, cutoff=asked_at))
    retrieval_s = time.perf_counter() - started
    answer = answer_question(llm, short, evidence, options, asked_at, memory.settings.answer_context_tokens,
                             memory.settings.answer_choice)
    answer.question = question
    if short != " ".join(question.split()):
        answer.extra["question_shortened"] = short
    answer.timings["retrieval_s"] = retrieval_s
    answer.extra["strategy"] = strategy
    return answer
