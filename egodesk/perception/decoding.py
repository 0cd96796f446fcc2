"""Token by token decoding for a local model: the next token's pick (held to the JSON schema's grammar,
`llama_engine.Grammar`), drafts of what a reply goes on with (prompt lookup decoding), a looping reply
caught, and the reply's text as its tokens come. No llama-cpp-python here: that is `llama_engine`'s."""

from __future__ import annotations

import codecs
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from egodesk.perception.llama_engine import Grammar

TOP_K = 40  # a sampled reply (a retry at temperature > 0) picks among this many likeliest tokens
# A small model may loop, writing one block of tokens again and again until its budget runs out (the
# composite clip's looped speech: one atomic statement 17 times, 680 tokens). A reply whose last
# REPEATS blocks of REPEAT_SPAN tokens are identical is ended there.
REPEATS = 3
REPEAT_SPAN = range(8, 65)


def repeating(tokens: list[int]) -> bool:
    for span in REPEAT_SPAN:
        if len(tokens) < REPEATS * span:
            return False
        last = tokens[-span:]
        if all(tokens[-(n + 1) * span : -n * span] == last for n in range(1, REPEATS)):
            return True
    return False


DRAFT_GRAM = (3, 2)  # the reply's last tokens looked up, longest first
DRAFT_TOKENS = 3  # drafted at most per step: a 1.5B model on 2 cores evaluates 4 tokens in ~1.9x the time of one


def shared_start(a, b) -> int:
    """How many first tokens two token sequences (lists or arrays) have in common."""
    import numpy as np

    n = min(len(a), len(b))
    differs = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(differs[0]) if differs.size else n


class Drafts:
    """What a reply may go on with: the tokens that followed its last DRAFT_GRAM tokens where they
    were last seen, in the texts given (the prompt) or the reply itself (prompt lookup decoding)."""

    def __init__(self, texts: list[list[int]]):
        self.tokens: list[int] = []
        self.after: dict[tuple[int, ...], int] = {}  # an n-gram -> where what followed it last starts
        for text in texts:
            for token in text:
                self.add(token)

    def add(self, token: int) -> None:
        end = len(self.tokens)  # the n-grams ending just before `token` are followed by it
        for n in DRAFT_GRAM:
            if end >= n:
                self.after[tuple(self.tokens[end - n : end])] = end
        self.tokens.append(token)

    def next(self, room: int) -> list[int]:
        for n in DRAFT_GRAM:
            if (at := self.after.get(tuple(self.tokens[-n:]))) is not None:
                return self.tokens[at : at + min(DRAFT_TOKENS, room)]
        return []


def pick(logits, temperature: float, grammar: Grammar | None, rng) -> int:
    """The next token: the likeliest one the grammar allows, or (temperature > 0) one drawn from the
    TOP_K likeliest allowed ones."""
    import numpy as np

    if temperature <= 0.0:
        token = int(np.argmax(logits))
        if grammar is None or grammar.allows(token):
            return token
        return int(np.argmax(grammar.mask(logits)))
    allowed = grammar.mask(logits) if grammar is not None else np.asarray(logits, dtype=np.float32)
    top = np.argpartition(allowed, -TOP_K)[-TOP_K:]
    top = top[np.isfinite(allowed[top])]
    weights = np.exp((allowed[top] - allowed[top].max()) / temperature)
    return int(rng.choice(top, p=weights / weights.sum()))


class ReplyText:
    """A reply's text as its tokens come, each new piece passed on to `on_text`."""

    def __init__(self, llama, on_text: Callable[[str], None] | None):
        self._llama, self._on_text = llama, on_text
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")  # a character may span tokens
        self.pieces: list[str] = []

    def add(self, token: int) -> None:
        if piece := self._decoder.decode(self._llama.detokenize([token])):
            self.pieces.append(piece)
            if self._on_text is not None:
                self._on_text(piece)

    def add_all(self, tokens: list[int]) -> str:
        for token in tokens:
            self.add(token)
        return str(self)

    def __str__(self) -> str:
        return "".join(self.pieces)
