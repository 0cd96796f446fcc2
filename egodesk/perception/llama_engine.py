"""llama-cpp-python behind one small class, so that an upgrade of it breaks this file and no other.

`LlamaEngine` is what `LocalLLM` asks of a GGUF run in-process: its chat template, tokens, evaluating
a prompt and cutting the evaluated tokens back, the logits, a batch of drafted tokens decoded at once,
and a prompt head's state saved and restored. `Grammar` is a JSON schema as a llama.cpp grammar. Both
reach into llama-cpp-python's internals (`Llama._ctx`, `_batch`, `input_ids`, `n_tokens`, the C API),
which its releases move; nothing else in egodesk does.
"""

from __future__ import annotations

import ctypes
import json
import math
from pathlib import Path
from typing import Any


class LlamaEngine:
    """One llama.cpp model and context (a CPU build with the flags this machine runs: setup.sh)."""

    def __init__(self, model_path: Path, n_ctx: int, threads: int):
        import llama_cpp

        self._llama = llama_cpp.Llama(
            str(model_path), n_ctx=n_ctx, n_threads=threads, n_batch=512, logits_all=False, verbose=False
        )
        self._vocab = llama_cpp.llama_model_get_vocab(self._llama.model)

    @property
    def llama(self):
        """The llama-cpp-python model itself: for tests and benchmarks that watch it, never for egodesk's
        own code, which asks this class."""
        return self._llama

    def n_ctx(self) -> int:
        return self._llama.n_ctx()

    def format(self, messages: list[dict[str, Any]]) -> str:
        """The messages in the model's own chat template."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        llama = self._llama
        formatter = Jinja2ChatFormatter(
            template=llama.metadata["tokenizer.chat_template"],
            eos_token=llama.detokenize([llama.token_eos()]).decode("utf-8", "ignore"),
            bos_token=llama.detokenize([llama.token_bos()]).decode("utf-8", "ignore"),
        )
        return formatter(messages=messages).prompt

    def prompt_tokens(self, formatted: str) -> list[int]:
        """A templated prompt's tokens: its role markers are the template's special tokens."""
        return self._llama.tokenize(formatted.encode("utf-8"), add_bos=False, special=True)

    def count_tokens(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False))

    def word_ids(self, word: str) -> list[int]:
        """The one-token spellings of `word` (as is, capitalised, after a space), else its first token."""
        variants = {word, word.capitalize(), " " + word, " " + word.capitalize()}
        return [ids[0] for v in variants if len(ids := self._llama.tokenize(v.encode(), add_bos=False)) == 1] or [
            self._llama.tokenize(word.encode(), add_bos=False)[0]
        ]

    def detokenize(self, tokens: list[int]) -> bytes:
        return self._llama.detokenize(tokens)

    def ends(self, token: int) -> bool:
        """Whether `token` ends a generation (end of turn, end of text)."""
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(self._vocab, token))

    def logits(self, i: int):
        """The logits after the `i`th token of the last batch evaluated (-1: its last), as a numpy view."""
        import llama_cpp
        import numpy as np

        return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self._llama.ctx, i), shape=(self._llama.n_vocab(),))

    def evaluated(self):
        """The tokens the context holds evaluated now (a numpy view)."""
        return self._llama.input_ids[: self._llama.n_tokens]

    def can_cut_back(self) -> bool:
        """Whether the evaluated tokens can be cut back to a prefix: a recurrent or hybrid model's state cannot."""
        return not (getattr(self._llama, "_is_recurrent", False) or getattr(self._llama, "_is_hybrid", False))

    def reset(self) -> None:
        self._llama.reset()

    def eval(self, tokens: list[int]) -> None:
        self._llama.eval(tokens)

    def cut_to(self, n: int, requires_eval: bool = False) -> None:
        """Keep the first `n` evaluated tokens: the next `eval` drops the cache from there on."""
        self._llama.n_tokens = n
        if requires_eval:
            self._llama._requires_eval = True

    def state(self) -> bytes:
        """The context's state (its KV cells) after the tokens evaluated, to `restore` later."""
        import llama_cpp

        ctx = self._llama.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, 0)
        return bytes(buffer)[:written]

    def restore(self, state: bytes, tokens: list[int]) -> None:
        """The context as `state` left it after `tokens`; evaluated again on their own when it cannot
        be restored (the same state `keep_prefix` saved). The caller says how many of them to keep."""
        import llama_cpp

        llama = self._llama
        llama._ctx.kv_cache_seq_rm(-1, 0, -1)
        data = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if llama_cpp.llama_state_seq_set_data(llama.ctx, data, len(state), 0) == 0:
            llama.reset()
            llama.eval(tokens)
        llama.input_ids[: len(tokens)] = tokens

    def decode_batch(self, batch: list[int]) -> int:
        """Evaluate `batch` after the tokens evaluated, with the logits of every position (a token and
        its draft, checked in one step); the position it starts at."""
        llama = self._llama
        start = llama.n_tokens
        llama._ctx.kv_cache_seq_rm(-1, start, -1)
        llama._batch.set_batch(batch=batch, n_past=start, logits_all=True)
        llama._ctx.decode(llama._batch)
        return start

    def keep_decoded(self, start: int, batch: list[int], kept: int) -> None:
        """Keep the first `kept` tokens of the batch decoded at `start`; the rest leave the cache."""
        llama = self._llama
        llama.input_ids[start : start + kept] = batch[:kept]
        llama.n_tokens = start + kept

    def grammar(self, schema: dict) -> Grammar:
        return Grammar(self._llama, schema)


class Grammar:
    """A JSON schema as a llama.cpp grammar, asked token by token. llama-cpp-python's sampler applies
    the grammar to the whole vocabulary (~150k tokens for Qwen) at every step; a greedy reply asks it
    only about the token it would pick, almost always allowed, and pays for the whole vocabulary only
    when that token is refused. Same reply, ~12% less time for a 1.5B model's records batch."""

    def __init__(self, llama, schema: dict):
        import llama_cpp
        from llama_cpp.llama_grammar import LLAMA_GRAMMAR_DEFAULT_ROOT, json_schema_to_gbnf

        rules = json_schema_to_gbnf(json.dumps(schema))
        vocab = llama_cpp.llama_model_get_vocab(llama.model)
        self._sampler = llama_cpp.llama_sampler_init_grammar(vocab, rules.encode(), LLAMA_GRAMMAR_DEFAULT_ROOT.encode())
        if not self._sampler:
            raise ValueError("the JSON schema could not be made into a grammar")
        self._one = (llama_cpp.llama_token_data * 1)()

    def _apply(self, data, size: int) -> None:
        import llama_cpp

        candidates = llama_cpp.llama_token_data_array(data=data, size=size, selected=-1, sorted=False)
        llama_cpp.llama_sampler_apply(self._sampler, ctypes.byref(candidates))

    def allows(self, token: int) -> bool:
        self._one[0].id, self._one[0].logit, self._one[0].p = token, 0.0, 0.0
        self._apply(self._one, 1)
        return math.isfinite(self._one[0].logit)

    def mask(self, logits):
        """The logits with every token the grammar refuses now at -inf."""
        import llama_cpp
        import numpy as np

        table = np.zeros(logits.size, dtype=[("id", np.int32), ("logit", np.float32), ("p", np.float32)])
        table["id"], table["logit"] = np.arange(logits.size), logits
        self._apply((llama_cpp.llama_token_data * logits.size).from_buffer(table), logits.size)
        return table["logit"]

    def accept(self, token: int) -> None:
        import llama_cpp

        llama_cpp.llama_sampler_accept(self._sampler, token)

    def close(self) -> None:
        import llama_cpp

        llama_cpp.llama_sampler_free(self._sampler)
