"""What every language model engine shares: the `LLM` protocol, its error, and a JSON reply turned
into data (`chat_json`: parsed, retried when malformed, a looping reply kept as its complete items).
The engines are `LocalLLM` (`perception/local_llm.py`) and `ServerLLM` (`perception/llm.py`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, Protocol

log = logging.getLogger("egodesk.perception.llm")

Messages = list[dict[str, Any]]
TextSink = Callable[[str], None]  # gets each new piece of a reply as the model produces it
# The optional arguments of `LLM.chat` and `LLM.prefill`, named once for every engine's signature.
Schema = dict | None
Sink = TextSink | None
StopAsk = Callable[[], bool] | None
JSON_RETRIES = 2


class LLMError(RuntimeError):
    """The model or server failed, or gave output that is not the JSON asked for."""


class LLM(Protocol):
    model_id: str
    in_flight: int  # requests it serves at once: 1 runs each in the caller's thread, one after another

    def chat(
        self, messages: Messages, max_tokens: int = 256, temperature: float = 0.0, schema: Schema = None, on_text: Sink = None
    ) -> tuple[str, int]:
        """The reply text and the number of prompt tokens it cost; `on_text` gets the reply as it grows."""

    def count_tokens(self, text: str) -> int: ...

    def keep_prefix(self, messages: Messages) -> None:
        """Prompts will start with these messages (the last one's content being the head of the user turn):
        evaluate them once and reuse that state. A hint: a server keeps its own prefix cache."""

    def prefill(self, messages: Messages, should_stop: StopAsk = None, schema: Schema = None, max_tokens: int = 0) -> None:
        """Read a prompt now, ahead of `chat`: a chat whose prompt starts the same way pays only for the
        rest. With `max_tokens`, also write the greedy reply (shaped by `schema`) it would get: a chat
        with the same prompt gets it at once, one whose prompt differs only at its end has it drafted.
        `should_stop` is asked between parts and steps and cuts the reading short. A hint: a server reads
        each request's prompt itself."""

    def yes_probability(self, messages: Messages) -> float:
        """P(first reply token is "yes") against "no": a pointwise relevance score for reranking."""


def parse_json(text: str) -> Any:
    """The JSON object in a reply, tolerating a fenced block or prose around it."""
    cleaned = text.strip()
    if cleaned.startswith("```"):
        cleaned = cleaned.strip("`").removeprefix("json").strip()
    try:
        return json.loads(cleaned)
    except json.JSONDecodeError:
        start, end = cleaned.find("{"), cleaned.rfind("}")
        if 0 <= start < end:
            return json.loads(cleaned[start : end + 1])
        raise


def looped_part(text: str) -> Any:
    """A JSON reply cut off inside a list, closed after its last complete item, when that list repeats
    an item (the reply was looping); else None."""
    stack: list[str] = []  # the closers of the open containers
    in_string = escaped = False
    cut = None
    for i, ch in enumerate(text):
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
            if stack and stack[-1] == "]":  # an item of a list is complete
                cut = text[: i + 1] + "".join(reversed(stack))
    try:
        data = json.loads(cut) if cut is not None else None
    except json.JSONDecodeError:
        return None
    lists = [v for v in data.values() if isinstance(v, list)] if isinstance(data, dict) else []
    repeated = any(len({json.dumps(item, sort_keys=True) for item in items}) < len(items) for items in lists)
    return data if repeated else None


def chat_json(
    llm: LLM,
    messages: Messages,
    schema: dict,
    max_tokens: int = 512,
    retries: int = JSON_RETRIES,
    on_text: TextSink | None = None,
    keep_looped: bool = False,
) -> tuple[Any, int]:
    """A schema-shaped reply as Python data, and the prompt tokens spent. Retries malformed output
    (sampled, so a retry can differ). `on_text` follows the first attempt only: a retry starts over.
    `keep_looped`: a reply cut off while it repeated a list item (a looping model, stopped) is kept as
    its complete items, instead of being retried into the same loop."""
    last = ""
    for attempt in range(1 + retries):
        stream = {"on_text": on_text} if on_text is not None and attempt == 0 else {}
        text, prompt_tokens = llm.chat(
            messages, max_tokens=max_tokens, temperature=0.0 if attempt == 0 else 0.3, schema=schema, **stream
        )
        try:
            return parse_json(text), prompt_tokens
        except json.JSONDecodeError:
            if keep_looped and (looped := looped_part(text)) is not None:
                log.info("%s: kept the complete items of a reply that looped", llm.model_id)
                return looped, prompt_tokens
            last = text
            log.info("LLM reply was not valid JSON (attempt %d): %.200r", attempt + 1, text)
    raise LLMError(f"{llm.model_id} did not return valid JSON after {1 + retries} attempts; last reply: {last[:300]!r}")
