"""`LocalLLM`: a GGUF run in-process by llama.cpp (through `perception/llama_engine.py`, the one file
that knows llama-cpp-python), with what makes a question cheap on a CPU: prompt heads many prompts
share kept evaluated (`keep_prefix`: the answerer's rules), a prompt read ahead while it is typed
(`prefill`), the replies of recent prompts kept (asked again, a question gets its answer at once), and
a greedy reply drafted from its prompt (`decoding.Drafts`) or from the reply read ahead.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from egodesk.perception.decoding import REPEATS, Drafts, ReplyText, pick, repeating, shared_start
from egodesk.perception.llama_engine import Grammar, LlamaEngine
from egodesk.perception.llm_base import LLMError, Messages, Schema, Sink, StopAsk

log = logging.getLogger("egodesk.perception.llm")

KEPT_PREFIXES = 6  # prompt heads a local model keeps evaluated (answer rules, the memory builders' rules, ...)


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


class _Reply:
    """A reply being written after an evaluated prompt: its tokens and text, the grammar and drafts
    following them, and whether the model ended it."""

    def __init__(
        self, engine: LlamaEngine, prompt: list[int], max_tokens: int, temperature: float, grammar: Grammar | None, on_text: Sink
    ):
        import numpy as np

        self._engine, self._max_tokens, self._temperature, self._grammar = engine, max_tokens, temperature, grammar
        self._rng = np.random.default_rng(0)
        self.text = ReplyText(engine, on_text)
        # Drafted from the prompt alone, not from recent replies too: a reply depends on its prompt alone
        # (`_eval_prompt`). Drafting from the schema's keys as well saved ~3% of an answer's time.
        self._drafts = Drafts([prompt]) if temperature <= 0.0 else None
        self.tokens: list[int] = []
        self.ended = False

    def pick(self, i: int) -> int:
        """The token picked after the `i`th position of the last batch."""
        return pick(self._engine.logits(i), self._temperature, self._grammar, self._rng)

    def goes_on(self, token: int, model_id: str) -> bool:
        """Keep `token` in the reply unless it ends it; False when the reply ends with it."""
        self.ended = self._engine.ends(token)
        return not self.ended and self._take(token, model_id)

    def _take(self, token: int, model_id: str) -> bool:
        if self._grammar is not None:
            self._grammar.accept(token)
        self.tokens.append(token)
        if self._drafts is not None:
            self._drafts.add(token)
        self.text.add(token)
        if repeating(self.tokens):
            log.info("%s: reply stopped after repeating itself %d times", model_id, REPEATS)
            return False
        return len(self.tokens) < self._max_tokens

    def draft(self, guide: list[int] | None) -> list[int]:
        """What the reply may go on with: the rest of `guide` while the reply follows it, else a draft."""
        tokens = self.tokens
        room = self._max_tokens - len(tokens)
        if guide is not None and len(guide) > len(tokens) and guide[: len(tokens)] == tokens:
            return guide[len(tokens) : len(tokens) + room]
        return self._drafts.next(room) if self._drafts is not None else []


class LocalLLM:
    """A GGUF run in-process by llama.cpp (a CPU build with the flags this machine runs: setup.sh)."""

    in_flight = 1  # one llama.cpp context: calls may not overlap

    def __init__(self, model_path: Path, threads: int = 2, n_ctx: int = 4096, model_id: str | None = None):
        if not Path(model_path).is_file():
            raise LLMError(f"model file not found: {model_path}")
        self.model_id = model_id or Path(model_path).stem
        self._engine = LlamaEngine(Path(model_path), n_ctx=n_ctx, threads=threads)
        self._kept: list[_Kept] = []  # most recently used last
        self._written: list[_Written] = []  # the last replies, most recent last
        self._ahead: _Written | None = None  # the last read-ahead's reply, to draft the next chat's

    def chat(
        self, messages: Messages, max_tokens: int = 256, temperature: float = 0.0, schema: Schema = None, on_text: Sink = None
    ) -> tuple[str, int]:
        prompt = self._prompt(messages)
        room = self._engine.n_ctx() - len(prompt)
        if room <= 0:
            raise LLMError(
                f"{self.model_id}: the prompt ({len(prompt)} tokens) exceeds the context window ({self._engine.n_ctx()})"
            )
        written = self._written_before(prompt, min(max_tokens, room), schema) if temperature <= 0.0 else None
        guide = self._guide(prompt) if temperature <= 0.0 and written is None else None
        self._ahead = None  # a read-ahead drafts the chat that follows it, no other
        if written is not None:
            text, reply, final = ReplyText(self._engine, on_text).add_all(written), written, True
        else:
            self._eval_prompt(prompt)
            # Always streamed: one path, and the caller may watch the reply grow.
            with self._grammar(schema) as grammar:
                text, reply, ended = self._reply(prompt, min(max_tokens, room), temperature, grammar, on_text, guide=guide)
            final = ended and temperature <= 0.0
        self._written = [*self._written[-(RECENT_REPLIES - 1) :], _Written(prompt, reply, schema, final)]
        return text, len(prompt)

    @contextmanager
    def _grammar(self, schema: Schema) -> Iterator[Grammar | None]:
        """`schema` as a grammar for one reply (None without one), freed after it: llama.cpp's sampler
        is native memory."""
        try:
            grammar = self._engine.grammar(schema) if schema is not None else None
        except ValueError as exc:
            raise LLMError(str(exc)) from exc
        try:
            yield grammar
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
        on_text: Sink = None,
        should_stop: StopAsk = None,
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
        engine = self._engine
        reply = _Reply(engine, prompt, max_tokens, temperature, grammar, on_text)
        token = reply.pick(-1)
        going = reply.goes_on(token, self.model_id)
        while going and not (should_stop is not None and should_stop()):
            batch = [token, *reply.draft(guide)]
            start = engine.decode_batch(batch)
            kept = 0
            while going and kept < len(batch):
                token = reply.pick(kept)
                kept += 1
                going = reply.goes_on(token, self.model_id)
                if kept == len(batch) or token != batch[kept]:
                    break  # the model goes elsewhere than the draft: `token` is evaluated next step
            engine.keep_decoded(start, batch, kept)  # drafted tokens the model did not pick leave the cache
        return str(reply.text), reply.tokens, reply.ended

    def keep_prefix(self, messages: Messages) -> None:
        formatted = self._engine.format(messages)
        head = messages[-1]["content"]
        # The template closes the turn after the head; a prompt continues it with its own text. The
        # last tokens of the head may merge with what follows, so they are left to each prompt.
        tokens = self._engine.prompt_tokens(formatted[: formatted.rfind(head) + len(head)])[:-2]
        for n, kept in enumerate(self._kept):
            if kept.tokens == tokens:
                self._kept.append(self._kept.pop(n))
                return
        self._engine.reset()  # evaluated on its own: the same state whatever ran before
        self._engine.eval(tokens)
        self._kept = [*self._kept[-(KEPT_PREFIXES - 1) :], _Kept(tokens, self._engine.state())]

    def prefill(self, messages: Messages, should_stop: StopAsk = None, schema: Schema = None, max_tokens: int = 0) -> None:
        prompt = self._prompt(messages)
        room = self._engine.n_ctx() - len(prompt)
        if room <= 0:
            return  # chat will say it does not fit
        if max_tokens > 0 and (written := self._written_before(prompt, min(max_tokens, room), schema)) is not None:
            self._ahead = _Written(prompt, written, schema, True)  # asked again: the reply it got before
            return
        self._eval_prompt(prompt, should_stop)
        if max_tokens <= 0 or (should_stop is not None and should_stop()):
            return
        with self._grammar(schema) as grammar:
            _, reply, ended = self._reply(prompt, min(max_tokens, room), 0.0, grammar, should_stop=should_stop)
        self._ahead = _Written(prompt, reply, schema, ended)

    def _kept_head(self, prompt: list[int]) -> _Kept | None:
        fits = [k for k in self._kept if len(k.tokens) < len(prompt) and prompt[: len(k.tokens)] == k.tokens]
        return max(fits, key=lambda k: len(k.tokens), default=None)

    def _eval_prompt(self, prompt: list[int], should_stop: StopAsk = None) -> None:
        """Evaluate `prompt` after the longest kept head it starts with, PREFILL_TOKENS at a time from the
        head's end, asking `should_stop` before each part; parts the context holds already (a read-ahead of
        the prompt) are kept. The same batches whatever ran before, so a reply depends on its prompt
        alone: resumed from all that the last prompt shared, a batch's arithmetic differed in the last
        bits and near ties tipped with the questions asked before (the test day scored 36/43 asked in
        order, 38/43 with each question alone). The memory builders keep their rules too, so what a batch
        builds does not depend on the batches before it. A prompt with no kept head (the model probe's)
        reuses all it shares with the last prompt."""
        kept = self._kept_head(prompt)
        if kept is None:
            self._eval_after_shared_prefix(prompt, should_stop)
            return
        engine, head = self._engine, len(kept.tokens)
        shared = shared_start(engine.evaluated(), prompt[: len(prompt) - 1])  # fresh logits
        if shared < head:
            engine.restore(kept.state, kept.tokens)
        # The parts a read-ahead of this prompt (or another sharing them) evaluated already are kept whole.
        resume = head + max(0, shared - head) // PREFILL_TOKENS * PREFILL_TOKENS
        engine.cut_to(resume, requires_eval=True)  # eval() drops the cache from here on
        for start in range(resume, len(prompt), PREFILL_TOKENS):
            if should_stop is not None and should_stop():
                return
            engine.eval(prompt[start : start + PREFILL_TOKENS])

    def _prompt(self, messages: Messages) -> list[int]:
        return self._tokens(self._format(messages))

    def _format(self, messages: Messages) -> str:
        return self._engine.format(messages)

    def _tokens(self, formatted: str) -> list[int]:
        return self._engine.prompt_tokens(formatted)

    @property
    def _llama(self):
        """The llama-cpp-python model itself, for the tests and benchmarks that count what it evaluates."""
        return self._engine.llama

    def count_tokens(self, text: str) -> int:
        return self._engine.count_tokens(text)

    def yes_probability(self, messages: Messages) -> float:
        # Only the last position's logits are kept (logits_all=False keeps memory flat), which is all
        # a one-token yes/no judgement needs: evaluate the templated prompt, compare two logits.
        import numpy as np

        self._eval_after_shared_prefix(self._prompt(messages))
        logits = np.asarray(self._engine.logits(-1)).astype(np.float64)
        yes, no = (max(logits[i] for i in self._engine.word_ids(w)) for w in ("yes", "no"))
        return float(1.0 / (1.0 + math.exp(no - yes)))

    def _eval_after_shared_prefix(self, tokens: list[int], should_stop: StopAsk = None) -> None:
        """Evaluate `tokens`, keeping the cached state of the prefix they share with the last prompt:
        a reranker's judgements of one question differ only in the passage at the end, so the rules
        and the question are evaluated once per question, not once per passage. With `should_stop`,
        PREFILL_TOKENS at a time, asking it before each part."""
        engine = self._engine
        keep = 0
        if engine.can_cut_back():
            # At least one token is evaluated, for fresh logits.
            keep = shared_start(engine.evaluated(), tokens[: len(tokens) - 1])
        if keep == 0:
            engine.reset()
        engine.cut_to(keep)  # eval() drops the cache from here on
        if should_stop is None:
            engine.eval(tokens[keep:])
            return
        for start in range(keep, len(tokens), PREFILL_TOKENS):
            if should_stop():
                return
            engine.eval(tokens[start : start + PREFILL_TOKENS])
