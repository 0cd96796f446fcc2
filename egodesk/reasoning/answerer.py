"""The answerer: the local LLM reads the retrieved evidence and answers in a JSON schema whose fields
come in the order evidence -> reasoning -> answer (the prompt and its schema: `reasoning.prompt`).

An open answer that says the evidence lacks it, cites nothing, or fails a check of
`reasoning.answer_checks` (none of its words in a line shown, a bare letter, what another person said
of themselves) becomes the abstention, as does a pick citing nothing. The model keeps the rules
evaluated (`LLM.keep_prefix`), so each question pays only for its evidence. The answer can be followed
as it is written (`on_text` gets the answer field's text, decoded, as the JSON reply grows); the checks
at the end still decide, and an answer they turn into the abstention says what was withdrawn.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from egodesk.core.types import ABSTENTION, Answer, Evidence
from egodesk.perception.llm import LLMError, TextSink, chat_json
from egodesk.perception.llm_base import LLM
from egodesk.reasoning.answer_checks import unsupported
from egodesk.reasoning.prompt import LETTERS, NOT_FOUND, Prompt, _option, build_prompt, prompt_head

MAX_TOKENS = 200


class FieldStream:
    """Follows one top-level string field of a JSON object while it is being written: `feed` takes the
    next piece of the raw reply and hands `sink` the field's newly decoded text, if any. Text that may
    still become `hold` (the not-found marker) is held back until it cannot."""

    def __init__(self, field: str, sink: TextSink, hold: str = ""):
        self.field, self.sink, self.hold = field, sink, hold.lower()
        self.raw = ""
        self.sent = ""

    def feed(self, piece: str) -> None:
        self.raw += piece
        value = partial_field(self.raw, self.field)
        if value is None or len(value) <= len(self.sent) or (self.hold and self.hold.startswith(value.lower())):
            return
        new, self.sent = value[len(self.sent) :], value
        self.sink(new)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "\\": "\\", "/": "/"}


def partial_field(raw: str, field: str) -> str | None:
    """The decoded value of top-level string `field` in `raw`, a JSON object possibly cut anywhere,
    as far as it is written; None until its value has begun. An escape cut in half waits for the rest."""
    depth, key, i = 0, None, 0
    after_colon = False
    while i < len(raw):
        char = raw[i]
        if char == '"':
            text, i, closed = _string(raw, i + 1)
            if depth == 1 and after_colon and key == field:
                return text
            if not closed:
                return None
            if depth == 1 and not after_colon:
                key = text
            after_colon = False
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        elif char == ":" and depth == 1:
            after_colon = True
        elif char == "," and depth == 1:
            key, after_colon = None, False
        i += 1
    return None


def _string(raw: str, i: int) -> tuple[str, int, bool]:
    """A JSON string's text from just after its opening quote: (text, index after it, closed)."""
    out = []
    while i < len(raw):
        char = raw[i]
        if char == '"':
            return "".join(out), i + 1, True
        if char == "\\":
            if i + 1 >= len(raw):
                break
            if raw[i + 1] == "u":
                digits = raw[i + 2 : i + 6]
                if len(digits) < 4:
                    break
                try:
                    out.append(chr(int(digits, 16)))
                except ValueError:
                    out.append(digits)
                i += 6
                continue
            out.append(_ESCAPES.get(raw[i + 1], raw[i + 1]))
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out), i, False


def answer_prompt(
    llm: LLM,
    question: str,
    evidence: list[Evidence],
    options: list[str] | None = None,
    asked_at: float | None = None,
    budget_tokens: int = 600,
    choice: str = "text",
    heard: Sequence[tuple[str, Sequence[float]]] = (),
) -> Prompt:
    """The prompt `answer_question` sends for the same arguments, its rules kept evaluated by `llm`;
    `heard`: when each person the question names was heard (the prompt says so)."""
    llm.keep_prefix(prompt_head(options, choice))
    return build_prompt(question, evidence, options, asked_at, budget_tokens, llm.count_tokens, choice, heard)


def read_answer_ahead(llm: LLM, prompt: Prompt, should_stop: Callable[[], bool] | None = None) -> None:
    """Have `llm` read `prompt` (`answer_prompt`'s, the one `answer_question` sends for the same
    arguments) and write its reply ahead (`LLM.prefill`): asked a moment later, the question's reply is
    checked, not written."""
    llm.prefill(prompt.messages, should_stop, prompt.schema, MAX_TOKENS)


def answer_question(
    llm: LLM,
    question: str,
    evidence: list[Evidence],
    options: list[str] | None = None,
    asked_at: float | None = None,
    budget_tokens: int = 600,
    choice: str = "text",
    on_text: TextSink | None = None,
    heard: Sequence[tuple[str, Sequence[float]]] = (),
) -> Answer:
    """Ask the LLM; returns an Answer with the cited evidence, grounding and token count. `choice`:
    a multiple-choice answer is the option's "text" or its "letter". `on_text` gets the answer as the
    model writes it (the final Answer is still what counts)."""
    started = time.perf_counter()
    prompt = answer_prompt(llm, question, evidence, options, asked_at, budget_tokens, choice, heard)
    stream = FieldStream("answer", on_text, hold=NOT_FOUND) if on_text is not None else None
    try:
        reply, tokens = chat_json(
            llm, prompt.messages, prompt.schema, max_tokens=MAX_TOKENS, on_text=stream.feed if stream is not None else None
        )
    except LLMError as exc:
        return Answer(
            question,
            ABSTENTION,
            prompt.shown,
            abstained=True,
            grounded=False,
            timings={"answer_s": time.perf_counter() - started},
            extra={"error": str(exc)},
        )
    by_id = dict(zip(prompt.ids, prompt.shown))
    listed = reply.get("evidence") if isinstance(reply, dict) else None
    # Only the ids shown count: a small model may write a nested list or an object where an id belongs.
    cited_ids = [c for c in listed if isinstance(c, str) and c in by_id] if isinstance(listed, list) else []
    cited = list(dict.fromkeys(by_id[c].unit_id for c in cited_ids))
    text = str(reply.get("answer", "")).strip() if isinstance(reply, dict) else ""
    out = Answer(
        question,
        text,
        prompt.shown,
        cited=cited,
        grounded=bool(cited),
        tokens=tokens,
        reasoning=str(reply.get("reasoning", "")) if isinstance(reply, dict) else "",
        timings={"answer_s": time.perf_counter() - started},
        extra={"cited_ids": cited_ids},
    )
    if options:
        if choice == "letter":
            index = LETTERS.find(text[:1].upper()) if text else -1
        else:
            index = next((i for i, o in enumerate(options) if _option(o) == text), -1)
        out.option_index = index if 0 <= index < len(options) else None
        out.text = options[out.option_index] if out.option_index is not None else ABSTENTION
        out.abstained = out.option_index is None
    elif not cited or not text or NOT_FOUND.lower() in text.lower() or text == ABSTENTION:
        out.text, out.abstained, out.grounded = ABSTENTION, True, False
    if not out.abstained and (
        reason := unsupported(out, options, [by_id[c] for c in cited_ids], prompt.shown, [name for name, _ in heard])
    ):
        out.extra["unsupported"] = f"{reason}: {out.text!r}"
        out.text, out.option_index, out.abstained, out.grounded = ABSTENTION, None, True, False
    if stream is not None and stream.sent.strip() and out.abstained:
        out.extra["withdrawn"] = stream.sent  # the streamed words did not hold: the reader is told
    return out
