"""Answers an evaluation has already paid for, kept by exactly what the model was asked.

An answer costs 15-20 s of CPU with llm-quality, and strategies often hand the answerer the same
evidence for a question (parent and parent-time, flat and carve, timeaware and auto on some
benchmarks), so the same prompt would be answered again, and again on every rerun. Greedy decoding
(temperature 0) makes the reply a function of the model and the prompt, so a reply found under the
digest of (model, messages, schema, max_tokens) is the reply the model would give. Sampled calls (the
JSON retries at temperature > 0) are passed through and never kept.

The original answering time is kept with the reply, so a report's latency stays the model's real
cost rather than the cache lookup.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path

from egodesk.perception.llm_base import LLM


class ReplyCache:
    """Wraps a chat model; same interface, greedy replies kept in a SQLite file."""

    def __init__(self, llm: LLM, path: Path):
        self._llm = llm
        self.model_id = llm.model_id
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS replies (digest TEXT PRIMARY KEY, model TEXT NOT NULL, "
            "reply TEXT NOT NULL, prompt_tokens INTEGER NOT NULL, seconds REAL NOT NULL)"
        )
        self._db.commit()
        self.saved_seconds = 0.0  # original answering time of every reply reused so far

    def chat(
        self, messages, max_tokens: int = 256, temperature: float = 0.0, schema: dict | None = None, on_text=None
    ) -> tuple[str, int]:
        stream = {"on_text": on_text} if on_text is not None else {}
        if temperature != 0.0:
            return self._llm.chat(messages, max_tokens=max_tokens, temperature=temperature, schema=schema, **stream)
        digest = hashlib.sha256(
            json.dumps([self.model_id, messages, schema, max_tokens], sort_keys=True, ensure_ascii=False).encode("utf-8")
        ).hexdigest()
        row = self._db.execute("SELECT reply, prompt_tokens, seconds FROM replies WHERE digest = ?", (digest,)).fetchone()
        if row is not None:
            self.saved_seconds += row[2]
            if on_text is not None:
                on_text(row[0])
            return row[0], row[1]
        started = time.perf_counter()
        reply, prompt_tokens = self._llm.chat(messages, max_tokens=max_tokens, temperature=temperature, schema=schema, **stream)
        with self._db:  # committed at once: a killed run keeps every answer it paid for
            self._db.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?)",
                (digest, self.model_id, reply, prompt_tokens, time.perf_counter() - started),
            )
        return reply, prompt_tokens

    def count_tokens(self, text: str) -> int:
        return self._llm.count_tokens(text)

    def keep_prefix(self, messages) -> None:
        self._llm.keep_prefix(messages)

    def close(self) -> None:
        self._db.close()
