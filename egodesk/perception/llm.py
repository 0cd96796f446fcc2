"""The language model behind extraction, reranking and answers.

Two engines share one small interface: `LocalLLM` (llama-cpp-python over a manifest GGUF) and
`ServerLLM` (any OpenAI-compatible /v1/chat/completions the user configured). JSON output is
constrained by a JSON schema (llama.cpp grammar locally, `response_format` on servers); output that
still fails to parse is retried, then reported as `LLMError` naming what came back.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any, Protocol

from egodesk.perception.chat_server import DEFAULT_IN_FLIGHT, ChatServer, ServerError

log = logging.getLogger(__name__)

Messages = list[dict[str, Any]]
JSON_RETRIES = 2


class LLMError(RuntimeError):
    """The model or server failed, or gave output that is not the JSON asked for."""


class LLM(Protocol):
    model_id: str
    in_flight: int  # requests it serves at once: 1 runs each in the caller's thread, one after another

    def chat(
        self, messages: Messages, max_tokens: int = 256, temperature: float = 0.0, schema: dict | None = None
    ) -> tuple[str, int]:
        """The reply text and the number of prompt tokens it cost."""

    def count_tokens(self, text: str) -> int: ...

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


def chat_json(llm: LLM, messages: Messages, schema: dict, max_tokens: int = 512, retries: int = JSON_RETRIES) -> tuple[Any, int]:
    """A schema-shaped reply as Python data, and the prompt tokens spent. Retries malformed output
    (sampled, so a retry can differ)."""
    last = ""
    for attempt in range(1 + retries):
        text, prompt_tokens = llm.chat(messages, max_tokens=max_tokens, temperature=0.0 if attempt == 0 else 0.3, schema=schema)
        try:
            return parse_json(text), prompt_tokens
        except json.JSONDecodeError:
            last = text
            log.info("LLM reply was not valid JSON (attempt %d): %.200r", attempt + 1, text)
    raise LLMError(f"{llm.model_id} did not return valid JSON after {1 + retries} attempts; last reply: {last[:300]!r}")


def _yes_no_from_logprobs(top: dict[str, float]) -> float:
    yes = sum(math.exp(lp) for tok, lp in top.items() if tok.strip().lower() == "yes")
    no = sum(math.exp(lp) for tok, lp in top.items() if tok.strip().lower() == "no")
    return yes / (yes + no) if yes + no > 0 else 0.5


class LocalLLM:
    """A GGUF run in-process by llama.cpp (CPU, portable AVX2 build)."""

    in_flight = 1  # one llama.cpp context: calls may not overlap

    def __init__(self, model_path: Path, threads: int = 2, n_ctx: int = 4096, model_id: str | None = None):
        from llama_cpp import Llama

        if not Path(model_path).is_file():
            raise LLMError(f"model file not found: {model_path}")
        self.model_id = model_id or Path(model_path).stem
        self._llama = Llama(str(model_path), n_ctx=n_ctx, n_threads=threads, n_batch=512, logits_all=False, verbose=False)

    def chat(
        self, messages: Messages, max_tokens: int = 256, temperature: float = 0.0, schema: dict | None = None
    ) -> tuple[str, int]:
        kwargs: dict[str, Any] = {}
        if schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        try:
            reply = self._llama.create_chat_completion(messages, max_tokens=max_tokens, temperature=temperature, seed=0, **kwargs)
        except ValueError as exc:  # e.g. the prompt exceeds the context window
            raise LLMError(f"{self.model_id}: {exc}") from exc
        return reply["choices"][0]["message"]["content"] or "", reply["usage"]["prompt_tokens"]

    def count_tokens(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False))

    def yes_probability(self, messages: Messages) -> float:
        # Only the last position's logits are kept (logits_all=False keeps memory flat), which is all
        # a one-token yes/no judgement needs: evaluate the templated prompt, compare two logits.
        import llama_cpp
        import numpy as np

        tokens = self._llama.tokenize(self._format(messages).encode("utf-8"), add_bos=False, special=True)
        self._eval_after_shared_prefix(tokens)
        pointer = llama_cpp.llama_get_logits_ith(self._llama.ctx, -1)
        logits = np.ctypeslib.as_array(pointer, shape=(self._llama.n_vocab(),)).astype(np.float64)
        yes, no = (max(logits[i] for i in self._word_ids(w)) for w in ("yes", "no"))
        return float(1.0 / (1.0 + math.exp(no - yes)))

    def _eval_after_shared_prefix(self, tokens: list[int]) -> None:
        """Evaluate `tokens`, keeping the cached state of the prefix they share with the last prompt:
        a reranker's judgements of one question differ only in the passage at the end, so the rules
        and the question are evaluated once per question, not once per passage."""
        import numpy as np

        llama = self._llama
        keep = 0
        if not (getattr(llama, "_is_recurrent", False) or getattr(llama, "_is_hybrid", False)):  # their state cannot be cut back
            limit = min(llama.n_tokens, len(tokens) - 1)  # at least one token is evaluated, for fresh logits
            differs = np.flatnonzero(llama.input_ids[:limit] != np.asarray(tokens[:limit]))
            keep = int(differs[0]) if differs.size else limit
        if keep == 0:
            llama.reset()
        llama.n_tokens = keep  # eval() drops the cache from here on
        llama.eval(tokens[keep:])

    def _format(self, messages: Messages) -> str:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        meta = self._llama.metadata
        vocab = self._llama
        formatter = Jinja2ChatFormatter(
            template=meta["tokenizer.chat_template"],
            eos_token=vocab.detokenize([vocab.token_eos()]).decode("utf-8", "ignore"),
            bos_token=vocab.detokenize([vocab.token_bos()]).decode("utf-8", "ignore"),
        )
        return formatter(messages=messages).prompt

    def _word_ids(self, word: str) -> list[int]:
        variants = {word, word.capitalize(), " " + word, " " + word.capitalize()}
        return [ids[0] for v in variants if len(ids := self._llama.tokenize(v.encode(), add_bos=False)) == 1] or [
            self._llama.tokenize(word.encode(), add_bos=False)[0]
        ]


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

    def _post(self, body: dict) -> dict:
        try:
            return self.server.post(body)
        except ServerError as exc:
            raise LLMError(str(exc)) from exc

    def chat(
        self, messages: Messages, max_tokens: int = 256, temperature: float = 0.0, schema: dict | None = None
    ) -> tuple[str, int]:
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if schema is not None:
            body["response_format"] = {"type": "json_object", "schema": schema}
        data = self._post(body)
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
