"""The language model behind extraction, reranking and answers.

Two engines share one small interface (`LLM`, `perception/llm_base.py`): `LocalLLM` (llama-cpp-python
over a manifest GGUF, `perception/local_llm.py`; llama-cpp-python itself only in
`perception/llama_engine.py`) and `ServerLLM` (any OpenAI-compatible /v1/chat/completions the user
configured). JSON output is constrained by a JSON schema (llama.cpp grammar locally, `response_format`
on servers); output that still fails to parse is retried, then reported as `LLMError` naming what came
back.

A reply can be streamed (`on_text` gets each piece as it is produced), and a local model keeps the
evaluated state of prompt heads that many prompts share (`keep_prefix`: the answerer's rules), so a
question pays only for its own evidence. Callers import all of it from here.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from egodesk.perception.chat_server import DEFAULT_IN_FLIGHT, ChatServer, ServerError
from egodesk.perception.llm_base import (
    JSON_RETRIES,
    LLM,
    LLMError,
    Messages,
    Schema,
    Sink,
    StopAsk,
    TextSink,
    chat_json,
    looped_part,
    parse_json,
)
from egodesk.perception.local_llm import PREFILL_TOKENS, LocalLLM

__all__ = [
    "JSON_RETRIES",
    "LLM",
    "PREFILL_TOKENS",
    "LLMError",
    "LocalLLM",
    "Messages",
    "ServerLLM",
    "TextSink",
    "chat_json",
    "looped_part",
    "make_llm",
    "parse_json",
]


def _yes_no_from_logprobs(top: dict[str, float]) -> float:
    yes = sum(math.exp(lp) for tok, lp in top.items() if tok.strip().lower() == "yes")
    no = sum(math.exp(lp) for tok, lp in top.items() if tok.strip().lower() == "no")
    return yes / (yes + no) if yes + no > 0 else 0.5


class ServerLLM:
    """An OpenAI-compatible chat server (llama.cpp server, vLLM, Ollama) at a URL the user gave."""

    def __init__(self, url: str, model: str = "", timeout: float = 120.0, transport: Any = None, requests: int = 0):
        if not url.strip():
            raise LLMError("no server URL is configured (Settings > Models > Server URL)")
        self.server = ChatServer(url, timeout=timeout, transport=transport)
        self.url = self.server.endpoint
        self.model_id = model or "server"
        self._requests = requests

    def close(self) -> None:
        self.server.close()

    @property
    def in_flight(self) -> int:
        """Requests that batch builders keep in flight: the setting, else the server's slots, else a default."""
        if not self._requests:
            self._requests = self.server.slots() or DEFAULT_IN_FLIGHT
        return self._requests

    def _post(self, body: dict, on_text: Sink = None) -> dict:
        try:
            return self.server.post(body, on_text)
        except ServerError as exc:
            raise LLMError(str(exc)) from exc

    def keep_prefix(self, messages: Messages) -> None:
        """Nothing to do: llama.cpp's server and vLLM reuse a shared prompt head themselves."""

    def prefill(self, messages: Messages, should_stop: StopAsk = None, schema: Schema = None, max_tokens: int = 0) -> None:
        """Nothing to do: a server reads the prompt fast enough, and a draft's request would hold a slot."""

    def chat(
        self, messages: Messages, max_tokens: int = 256, temperature: float = 0.0, schema: Schema = None, on_text: Sink = None
    ) -> tuple[str, int]:
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if schema is not None:
            body["response_format"] = {"type": "json_object", "schema": schema}
        data = self._post(body, on_text)
        try:
            return data["choices"][0]["message"]["content"] or "", int(data.get("usage", {}).get("prompt_tokens", 0))
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"{self.url}: malformed reply {str(data)[:300]}") from exc

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)  # servers expose no tokenizer in the OpenAI API; ~4 chars a token

    def yes_probability(self, messages: Messages) -> float:
        data = self._post(
            {
                "model": self.model_id,
                "messages": messages,
                "max_tokens": 1,
                "temperature": 0.0,
                "logprobs": True,
                "top_logprobs": 10,
            }
        )
        try:
            content = data["choices"][0]["logprobs"]["content"]
            return _yes_no_from_logprobs({c["token"]: c["logprob"] for c in content[0]["top_logprobs"]})
        except (KeyError, IndexError, TypeError):
            return 0.5


def make_llm(settings, user_models: Path | None = None, role: str | None = None, n_ctx: int = 4096) -> LLM:
    """The LLM the settings name: a server when configured, else the manifest GGUF of `role`."""
    from egodesk.core.manifest import locate_file

    if settings.llm_backend == "server":
        return ServerLLM(settings.server_url, settings.server_model, settings.server_timeout_s, requests=settings.server_requests)
    if settings.llm_model_path and role is None:  # a GGUF the user added replaces the manifest's
        return LocalLLM(Path(settings.llm_model_path), threads=settings.threads, n_ctx=n_ctx)
    role = role or settings.llm_model
    return LocalLLM(locate_file(role, user_models), threads=settings.threads, n_ctx=n_ctx, model_id=role)
