"""Test doubles shared by the suite: one scripted chat model, checked against the `LLM` protocol
(tests/test_doubles.py), instead of a copy in each test module."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

Reply = Any  # a str, a dict (sent as JSON), an exception (raised) or, for a judge, a number


class ScriptedLLM:
    """The chat model, scripted: each `chat` gets the next reply (a dict is sent as its JSON, an
    exception is raised), or with `repeat_last` the last one again once the script runs out. It records
    what it was sent (`sent`: messages and schema) and what it was given to read ahead (`read`), and
    streams a reply a few characters at a time to `on_text`, as a model writes it. `delay` seconds pass
    in each chat (a model that takes time). Subclasses compute replies from the prompt (`reply`)."""

    model_id = "scripted"
    in_flight = 1

    def __init__(self, *replies: Reply, repeat_last: bool = False, prompt_tokens: int = 321, delay: float = 0.0):
        self.replies = list(replies)
        self.repeat_last = repeat_last
        self.prompt_tokens = prompt_tokens
        self.delay = delay
        self.sent: list[tuple[list[dict[str, Any]], dict | None]] = []
        self.read: list[tuple[list[dict[str, Any]], dict | None, int]] = []
        self.judged: list[list[dict[str, Any]]] = []

    @property
    def calls(self) -> int:
        return len(self.sent)

    def reply(self, messages: list[dict[str, Any]], schema: dict | None) -> Reply:
        if self.repeat_last and len(self.replies) == 1:
            return self.replies[0]
        return self.replies.pop(0)

    def chat(
        self,
        messages: list[dict[str, Any]],
        max_tokens: int = 256,
        temperature: float = 0.0,
        schema: dict | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> tuple[str, int]:
        self.sent.append((messages, schema))
        if self.delay:
            time.sleep(self.delay)
        reply = self.reply(messages, schema)
        if isinstance(reply, Exception):
            raise reply
        text = reply if isinstance(reply, str) else json.dumps(reply)
        if on_text is not None:
            for i in range(0, len(text), 3):
                on_text(text[i : i + 3])
        return text, self.prompt_tokens

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def keep_prefix(self, messages: list[dict[str, Any]]) -> None:
        pass  # nothing is evaluated here

    def prefill(
        self,
        messages: list[dict[str, Any]],
        should_stop: Callable[[], bool] | None = None,
        schema: dict | None = None,
        max_tokens: int = 0,
    ) -> None:
        self.read.append((messages, schema, max_tokens))

    def yes_probability(self, messages: list[dict[str, Any]]) -> float:
        """Relevance as a judge scores it: the next scripted reply, a number."""
        self.judged.append(messages)
        return float(self.reply(messages, None))
