"""The language model behind extraction, reranking and answers.

Two engines share one small interface: `LocalLLM` (llama-cpp-python over a manifest GGUF) and
`ServerLLM` (any OpenAI-compatible /v1/chat/completions the user configured). JSON output is
constrained by a JSON schema (llama.cpp grammar locally, `response_format` on servers); output that
still fails to parse is retried, then reported as `LLMError` naming what came back.

A reply can be streamed (`on_text` gets each piece as it is produced), and a local model keeps the
evaluated state of prompt heads that many prompts share (`keep_prefix`: the answerer's rules), so a
question pays only for its own evidence.
"""

from __future__ import annotations

import ctypes
import json
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from egodesk.perception.chat_server import DEFAULT_IN_FLIGHT, ChatServer, ServerError
from egodesk.perception.decoding import REPEATS, Drafts, Grammar, ReplyText, pick, repeating, shared_start

log = logging.getLogger(__name__)

Messages = list[dict[str, Any]]
TextSink = Callable[[str], None]  # gets each new piece of a reply as the model produces it
JSON_RETRIES = 2
KEPT_PREFIXES = 6  # prompt heads a local model keeps evaluated (answer rules, the memory builders' rules, ...)


class LLMError(RuntimeError):
    """The model or server failed, or gave output that is not the JSON asked for."""


class LLM(Protocol):
    model_id: str
    in_flight: int  # requests it serves at once: 1 runs each in the caller's thread, one after another

    def chat(
        self,
        messages: Messages,
        max_tokens: int = 256,
        temperature: float = 0.0,
        schema: dict | None = None,
        on_text: TextSink | None = None,
    ) -> tuple[str, int]:
        """The reply text and the number of prompt tokens it cost; `on_text` gets the reply as it grows."""

    def count_tokens(self, text: str) -> int: ...

    def keep_prefix(self, messages: Messages) -> None:
        """Prompts will start with these messages (the last one's content being the head of the user turn):
        evaluate them once and reuse that state. A hint: a server keeps its own prefix cache."""

    def prefill(
        self,
        messages: Messages,
        should_stop: Callable[[], bool] | None = None,
        schema: dict | None = None,
        max_tokens: int = 0,
    ) -> None:
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


def _yes_no_from_logprobs(top: dict[str, float]) -> float:
    yes = sum(math.exp(lp) for tok, lp in top.items() if tok.strip().lower() == "yes")
    no = sum(math.exp(lp) for tok, lp in top.items() if tok.strip().lower() == "no")
    return yes / (yes + no) if yes + no > 0 else 0.5


@dataclass
class _Written:
    """A prompt and the reply written to it (as far as it got)."""

    prompt: list[int]
    reply: list[int]
    schema: dict | None
    final: bool  # a greedy reply the model ended itself: the same prompt and schema get it again


@dataclass
class _Kept:
    """A prompt head's tokens and the llama.cpp state (its KV cells) after evaluating them."""

    tokens: list[int]
    state: bytes


# A prompt read ahead stops within a part's time (~0.6 s on 2 cores) when the question is asked meanwhile.
PREFILL_TOKENS = 64
RECENT_REPLIES = 4  # replies kept: a prompt asked again gets its reply at once (`_written_before`)
# A reply read ahead drafts the reply of a prompt that differs from its own only in their last tokens
# (the time the question was asked, its last characters): it is checked whole in one step (16 tokens
# take ~4x the time of one on 2 cores), not DRAFT_TOKENS at a time, as it is the reply unless those
# last tokens change the model's mind.
AHEAD_TAIL = 48


class LocalLLM:
    """A GGUF run in-process by llama.cpp (a CPU build with the flags this machine runs: setup.sh)."""

    in_flight = 1  # one llama.cpp context: calls may not overlap

    def __init__(self, model_path: Path, threads: int = 2, n_ctx: int = 4096, model_id: str | None = None):
        from llama_cpp import Llama

        if not Path(model_path).is_file():
            raise LLMError(f"model file not found: {model_path}")
        self.model_id = model_id or Path(model_path).stem
        self._llama = Llama(str(model_path), n_ctx=n_ctx, n_threads=threads, n_batch=512, logits_all=False, verbose=False)
        self._kept: list[_Kept] = []  # most recently used last
        self._written: list[_Written] = []  # the last replies, most recent last
        self._ahead: _Written | None = None  # the last read-ahead's reply, to draft the next chat's

    def chat(
        self,
        messages: Messages,
        max_tokens: int = 256,
        temperature: float = 0.0,
        schema: dict | None = None,
        on_text: TextSink | None = None,
    ) -> tuple[str, int]:
        prompt = self._tokens(self._format(messages))
        room = self._llama.n_ctx() - len(prompt)
        if room <= 0:
            raise LLMError(
                f"{self.model_id}: the prompt ({len(prompt)} tokens) exceeds the context window ({self._llama.n_ctx()})"
            )
        written = self._written_before(prompt, min(max_tokens, room), schema) if temperature <= 0.0 else None
        guide = self._guide(prompt) if temperature <= 0.0 and written is None else None
        self._ahead = None  # a read-ahead drafts the chat that follows it, no other
        if written is not None:
            text, reply, final = ReplyText(self._llama, on_text).add_all(written), written, True
        else:
            self._eval_prompt(prompt)
            # Always streamed: one path, and the caller may watch the reply grow.
            text, reply, ended = self._shaped_reply(prompt, min(max_tokens, room), temperature, schema, on_text, guide=guide)
            final = ended and temperature <= 0.0
        self._written = [*self._written[-(RECENT_REPLIES - 1) :], _Written(prompt, reply, schema, final)]
        return text, len(prompt)

    def _shaped_reply(
        self,
        prompt: list[int],
        max_tokens: int,
        temperature: float,
        schema: dict | None,
        on_text: TextSink | None = None,
        should_stop: Callable[[], bool] | None = None,
        guide: list[int] | None = None,
    ) -> tuple[str, list[int], bool]:
        """`_reply`, held to `schema` (a grammar) when there is one."""
        try:
            grammar = Grammar(self._llama, schema) if schema is not None else None
        except ValueError as exc:
            raise LLMError(str(exc)) from exc
        try:
            return self._reply(prompt, max_tokens, temperature, grammar, on_text, should_stop, guide)
        finally:
            if grammar is not None:
                grammar.close()

    def _written_before(self, prompt: list[int], max_tokens: int, schema: dict | None) -> list[int] | None:
        """The greedy reply the model ended to this very prompt and schema, read ahead or written to a
        recent chat: asked again, a question gets the same answer, at once. Written again, the same
        reply (`_eval_prompt`) unless a reply read ahead guided the batches (`_guide`): a batch's
        arithmetic differs from one token's in the last bits, and near ties tip."""
        for written in (self._ahead, *reversed(self._written)):
            if written is not None and written.final and written.prompt == prompt and written.schema == schema:
                return written.reply if len(written.reply) < max_tokens else None
        return None

    def _guide(self, prompt: list[int]) -> list[int] | None:
        """The reply read ahead, where its prompt and `prompt` differ only in their last AHEAD_TAIL tokens."""
        ahead = self._ahead
        if ahead is None or not ahead.reply:
            return None
        shared = shared_start(ahead.prompt, prompt)
        return ahead.reply if max(len(ahead.prompt), len(prompt)) - shared <= AHEAD_TAIL else None

    def _reply(
        self,
        prompt: list[int],
        max_tokens: int,
        temperature: float,
        grammar: Grammar | None,
        on_text: TextSink | None = None,
        should_stop: Callable[[], bool] | None = None,
        guide: list[int] | None = None,
    ) -> tuple[str, list[int], bool]:
        """Generate after the evaluated prompt until an end-of-generation token, `max_tokens` or
        `should_stop`; the text, its tokens and whether the model ended it.

        A greedy reply is drafted ahead (`Drafts`): the tokens that followed the same words in the
        prompt or the reply so far are evaluated together with the next one, in one batch, and kept as
        far as they are what the model picks anyway: fewer steps where it copies (a name, a date, a
        quoted line). 12 LoCoMo answers with llm-quality, drafted from their prompts and recent replies:
        800 tokens in 440 steps, 110 s instead of 122 s. A batch's arithmetic differs from one token's
        in the last bits, so where two tokens nearly tie the wording may differ from an undrafted
        reply's (5 of those 12; their answers did not). While the reply follows `guide` (a reply read
        ahead), the guide's whole rest is the draft."""
        import llama_cpp
        import numpy as np

        llama = self._llama
        vocab = llama_cpp.llama_model_get_vocab(llama.model)
        rng = np.random.default_rng(0)
        text = ReplyText(llama, on_text)
        # Drafted from the prompt alone, not from recent replies too: a reply depends on its prompt alone
        # (`_eval_prompt`). Drafting from the schema's keys as well saved ~3% of an answer's time.
        drafts = Drafts([prompt]) if temperature <= 0.0 else None
        tokens: list[int] = []

        def logits(i: int):
            return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama.ctx, i), shape=(llama.n_vocab(),))

        def take(token: int) -> bool:
            """Keep `token` in the reply; False when the reply ends with it."""
            if grammar is not None:
                grammar.accept(token)
            tokens.append(token)
            if drafts is not None:
                drafts.add(token)
            text.add(token)
            if repeating(tokens):
                log.info("%s: reply stopped after repeating itself %d times", self.model_id, REPEATS)
                return False
            return len(tokens) < max_tokens

        ended = False

        def goes_on(token: int) -> bool:
            nonlocal ended
            ended = bool(llama_cpp.llama_vocab_is_eog(vocab, token))
            return not ended and take(token)

        token = pick(logits(-1), temperature, grammar, rng)
        going = goes_on(token)

        def draft() -> list[int]:
            room = max_tokens - len(tokens)
            if guide is not None and len(guide) > len(tokens) and guide[: len(tokens)] == tokens:
                return guide[len(tokens) : len(tokens) + room]
            return drafts.next(room) if drafts is not None else []

        while going and not (should_stop is not None and should_stop()):
            batch = [token, *draft()]
            start = llama.n_tokens
            llama._ctx.kv_cache_seq_rm(-1, start, -1)
            llama._batch.set_batch(batch=batch, n_past=start, logits_all=True)
            llama._ctx.decode(llama._batch)
            kept = 0
            while going and kept < len(batch):
                token = pick(logits(kept), temperature, grammar, rng)
                kept += 1
                going = goes_on(token)
                if kept == len(batch) or token != batch[kept]:
                    break  # the model goes elsewhere than the draft: `token` is evaluated next step
            llama.input_ids[start : start + kept] = batch[:kept]
            llama.n_tokens = start + kept  # drafted tokens the model did not pick leave the cache
        return str(text), tokens, ended

    def keep_prefix(self, messages: Messages) -> None:
        import llama_cpp

        formatted = self._format(messages)
        head = messages[-1]["content"]
        # The template closes the turn after the head; a prompt continues it with its own text. The
        # last tokens of the head may merge with what follows, so they are left to each prompt.
        tokens = self._tokens(formatted[: formatted.rfind(head) + len(head)])[:-2]
        for n, kept in enumerate(self._kept):
            if kept.tokens == tokens:
                self._kept.append(self._kept.pop(n))
                return
        self._llama.reset()  # evaluated on its own: the same state whatever ran before
        self._llama.eval(tokens)
        ctx = self._llama.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, 0)
        self._kept = [*self._kept[-(KEPT_PREFIXES - 1) :], _Kept(tokens, bytes(buffer)[:written])]

    def prefill(
        self,
        messages: Messages,
        should_stop: Callable[[], bool] | None = None,
        schema: dict | None = None,
        max_tokens: int = 0,
    ) -> None:
        prompt = self._tokens(self._format(messages))
        room = self._llama.n_ctx() - len(prompt)
        if room <= 0:
            return  # chat will say it does not fit
        if max_tokens > 0 and (written := self._written_before(prompt, min(max_tokens, room), schema)) is not None:
            self._ahead = _Written(prompt, written, schema, True)  # asked again: the reply it got before
            return
        self._eval_prompt(prompt, should_stop)
        if max_tokens <= 0 or (should_stop is not None and should_stop()):
            return
        _, reply, ended = self._shaped_reply(prompt, min(max_tokens, room), 0.0, schema, should_stop=should_stop)
        self._ahead = _Written(prompt, reply, schema, ended)

    def _kept_head(self, prompt: list[int]) -> _Kept | None:
        fits = [k for k in self._kept if len(k.tokens) < len(prompt) and prompt[: len(k.tokens)] == k.tokens]
        return max(fits, key=lambda k: len(k.tokens), default=None)

    def _eval_prompt(self, prompt: list[int], should_stop: Callable[[], bool] | None = None) -> None:
        """Evaluate `prompt` after the longest kept head it starts with, PREFILL_TOKENS at a time from the
        head's end, asking `should_stop` before each part; parts the context holds already (a read-ahead of
        the prompt) are kept. The same batches whatever ran before, so a reply depends on its prompt
        alone: resumed from all that the last prompt shared, a batch's arithmetic differed in the last
        bits and near ties tipped with the questions asked before (the test day scored 36/43 asked in
        order, 38/43 with each question alone). The memory builders keep their rules too, so what a batch
        builds does not depend on the batches before it. A prompt with no kept head (the model probe's)
        reuses all it shares with the last prompt."""
        import llama_cpp

        kept = self._kept_head(prompt)
        if kept is None:
            self._eval_after_shared_prefix(prompt, should_stop)
            return
        llama, head = self._llama, len(kept.tokens)
        shared = shared_start(llama.input_ids[: llama.n_tokens], prompt[: len(prompt) - 1])  # fresh logits
        if shared < head:
            llama._ctx.kv_cache_seq_rm(-1, 0, -1)
            data = (ctypes.c_uint8 * len(kept.state)).from_buffer_copy(kept.state)
            if llama_cpp.llama_state_seq_set_data(llama.ctx, data, len(kept.state), 0) == 0:
                llama.reset()  # could not restore: evaluated again on its own, as `keep_prefix` did
                llama.eval(kept.tokens)
            llama.input_ids[:head] = kept.tokens
        # The parts a read-ahead of this prompt (or another sharing them) evaluated already are kept whole.
        resume = head + max(0, shared - head) // PREFILL_TOKENS * PREFILL_TOKENS
        llama.n_tokens = resume  # eval() drops the cache from here on
        llama._requires_eval = True
        for start in range(resume, len(prompt), PREFILL_TOKENS):
            if should_stop is not None and should_stop():
                return
            llama.eval(prompt[start : start + PREFILL_TOKENS])

    def _tokens(self, formatted: str) -> list[int]:
        return self._llama.tokenize(formatted.encode("utf-8"), add_bos=False, special=True)

    def count_tokens(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False))

    def yes_probability(self, messages: Messages) -> float:
        # Only the last position's logits are kept (logits_all=False keeps memory flat), which is all
        # a one-token yes/no judgement needs: evaluate the templated prompt, compare two logits.
        import llama_cpp
        import numpy as np

        tokens = self._tokens(self._format(messages))
        self._eval_after_shared_prefix(tokens)
        pointer = llama_cpp.llama_get_logits_ith(self._llama.ctx, -1)
        logits = np.ctypeslib.as_array(pointer, shape=(self._llama.n_vocab(),)).astype(np.float64)
        yes, no = (max(logits[i] for i in self._word_ids(w)) for w in ("yes", "no"))
        return float(1.0 / (1.0 + math.exp(no - yes)))

    def _eval_after_shared_prefix(self, tokens: list[int], should_stop: Callable[[], bool] | None = None) -> None:
        """Evaluate `tokens`, keeping the cached state of the prefix they share with the last prompt:
        a reranker's judgements of one question differ only in the passage at the end, so the rules
        and the question are evaluated once per question, not once per passage. With `should_stop`,
        PREFILL_TOKENS at a time, asking it before each part."""

        llama = self._llama
        keep = 0
        if not (getattr(llama, "_is_recurrent", False) or getattr(llama, "_is_hybrid", False)):  # their state cannot be cut back
            # At least one token is evaluated, for fresh logits.
            keep = shared_start(llama.input_ids[: llama.n_tokens], tokens[: len(tokens) - 1])
        if keep == 0:
            llama.reset()
        llama.n_tokens = keep  # eval() drops the cache from here on
        if should_stop is None:
            llama.eval(tokens[keep:])
            return
        for start in range(keep, len(tokens), PREFILL_TOKENS):
            if should_stop():
                return
            llama.eval(tokens[start : start + PREFILL_TOKENS])

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

    def _post(self, body: dict, on_text: TextSink | None = None) -> dict:
        try:
            return self.server.post(body, on_text)
        except ServerError as exc:
            raise LLMError(str(exc)) from exc

    def keep_prefix(self, messages: Messages) -> None:
        """Nothing to do: llama.cpp's server and vLLM reuse a shared prompt head themselves."""

    def prefill(
        self,
        messages: Messages,
        should_stop: Callable[[], bool] | None = None,
        schema: dict | None = None,
        max_tokens: int = 0,
    ) -> None:
        """Nothing to do: a server reads the prompt fast enough, and a draft's request would hold a slot."""

    def chat(
        self,
        messages: Messages,
        max_tokens: int = 256,
        temperature: float = 0.0,
        schema: dict | None = None,
        on_text: TextSink | None = None,
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
