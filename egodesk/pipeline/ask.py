"""The one ask path: the app, `egodesk ask` and `egodesk eval` answer a question through here, so the
benchmarks measure what ships.

question -> checked and shortened -> analysed against the library's days (its time window) ->
retrieved by a strategy (every strategy searches inside the window) -> answered from the evidence ->
evidence ordered for people (cited first, then by relevance, each with its rank) with offsets into
its footage file for the player.

A caller that shows the answer as it comes passes `on_evidence` (the moments found, by relevance, as
soon as retrieval is done: before the model starts) and `on_text` (the answer's words as they are
written).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from egodesk.core.timeutil import from_ts, now_ts
from egodesk.core.types import ABSTENTION, Answer, Evidence
from egodesk.memory.queries import footage_starts, place
from egodesk.perception.llm import TextSink
from egodesk.reasoning.answer_checks import asked_about, people_order, unmentioned, with_when
from egodesk.reasoning.answerer import answer_prompt, answer_question, read_answer_ahead
from egodesk.reasoning.facts import attach_facts
from egodesk.reasoning.prompt import prompt_head
from egodesk.retrieval.base import Memory, Query
from egodesk.retrieval.registry import make_strategy
from egodesk.retrieval.timewindow import TimeWindow

# A longer question (a pasted text, say) is cut to its start and its end, where the actual question
# usually is: retrieval reads about what the embedder would (256 word pieces), and the evidence keeps
# most of the answer prompt's budget (600 tokens by default). The answerer's own cap (head only) is
# longer, so it leaves the end in place.
QUESTION_CHARS = 800
QUESTION_TOKENS = 300


def check_question(question: str) -> str:
    """The question on one line; a clear error when there is none (before any model is loaded)."""
    text = " ".join((question or "").split())
    if not text:
        raise ValueError("the question is empty")
    return text


def shorten(question: str, count_tokens) -> str:
    """The question on one line, cut to QUESTION_CHARS characters and QUESTION_TOKENS tokens."""
    text = " ".join(question.split())
    limit = min(len(text), QUESTION_CHARS)
    while True:
        head = limit * 2 // 3
        cut = text if limit >= len(text) else f"{text[:head]} … {text[len(text) - max(0, limit - head - 3) :]}"
        tokens = count_tokens(cut)
        if tokens <= QUESTION_TOKENS or limit <= 16:
            return cut
        limit = limit * QUESTION_TOKENS * 9 // (tokens * 10)  # CJK text runs about a token a character


def _rough_tokens(text: str) -> int:
    """Without a model at hand (retrieval-only runs): about a token per 3 characters, erring long."""
    return len(text) // 3 + 1


@dataclass
class Retrieval:
    """What a strategy found for a question: the evidence best first, each with its 1-based rank."""

    question: str  # as retrieval and the answerer read it (shortened when it was long)
    query: Query
    evidence: list[Evidence]
    seconds: float

    @property
    def window(self) -> TimeWindow | None:
        return self.query.window


def retrieve(
    memory: Memory,
    question: str,
    options: list[str] | None = None,
    asked_at: float | None = None,
    strategy: str = "auto",
    k: int = 12,
    sources=None,
    online: bool = True,
    count_tokens=None,
) -> Retrieval:
    """Rank the library's memory for a question. `asked_at` defaults to now; with `online`, memory from
    after it is not used."""
    asked_at = now_ts() if asked_at is None else asked_at  # wall-clock seconds, as stored
    short = shorten(check_question(question), count_tokens or _rough_tokens)
    query = Query(short, options, asked_at, sources, k, cutoff=asked_at if online else None, days=memory.days())
    started = time.perf_counter()
    evidence = make_strategy(strategy, memory).retrieve(query)
    for rank, ev in enumerate(evidence, start=1):
        ev.rank = rank
    return Retrieval(short, query, evidence, time.perf_counter() - started)


def answer(
    memory: Memory,
    llm,
    found: Retrieval,
    question: str,
    options: list[str] | None = None,
    on_text: TextSink | None = None,
) -> Answer:
    """Answer from what was found; a question whose time window holds no footage is told so."""
    query = found.query
    if (settled := without_model(memory, found, question, options)) is not None:
        out = settled
    else:
        given = _answerer_input(memory, found, options)
        out = answer_question(llm, **given, on_text=on_text)
        out.evidence = people_order(out, given["evidence"])
        if query.analysis.asks_when and not query.analysis.asks_stated_time and not out.abstained and not options:
            out.text = with_when(out, asked_about(query.analysis))
    out.question = question
    if found.question != " ".join(question.split()):
        out.extra["question_shortened"] = found.question
    if query.window is not None:
        out.extra["window"] = _span(query.window)
    if query.analysis.recalled is not None:  # before the first footage: what was said of it later
        out.extra["recalled"] = _span(query.analysis.recalled)
    out.timings["retrieval_s"] = found.seconds
    return out


def _answerer_input(memory: Memory, found: Retrieval, options: list[str] | None) -> dict:
    """What the answerer is given for what was found: the same for an answer and for its read-ahead
    (`prepare`), so the prompt read ahead is the prompt the answer sends."""
    settings = memory.settings
    return {
        "question": found.question,
        "evidence": attach_facts(memory.catalog(), found.evidence),
        "options": options,
        "asked_at": found.query.asked_at,
        "budget_tokens": settings.answer_prompt_tokens,
        "choice": settings.answer_choice,
    }


def without_model(memory: Memory, found: Retrieval, question: str, options: list[str] | None) -> Answer | None:
    """The abstention, when the model is not to be asked: the question's time window holds no footage,
    or nothing found mentions the things it asks about."""
    query = found.query
    if (empty := empty_window(memory, query)) is not None:
        return Answer(question, f"{ABSTENTION} You have no footage from {describe(empty)}.", [], abstained=True, grounded=False)
    if not options and (missing := unmentioned(query.analysis, found.evidence)):
        # Nothing found is about it: a small model would still answer from the nearest moment ("Where did
        # I park my car?" -> "front door", from where the keys were put).
        said = " or ".join(f"'{w}'" for w in missing[:3])
        return Answer(question, f"{ABSTENTION} Nothing found mentions {said}.", found.evidence, abstained=True, grounded=False)
    return None


def empty_window(memory: Memory, query: Query) -> TimeWindow | None:
    """The time window the question names, when no footage was recorded in it (the model would answer
    from another day)."""
    return query.window if query.window is not None and not memory.scope(query).any() else None


def ask(
    memory: Memory,
    llm,
    question: str,
    options: list[str] | None = None,
    asked_at: float | None = None,
    strategy: str = "auto",
    k: int = 12,
    sources=None,
    on_evidence: Callable[[list[Evidence]], None] | None = None,
    on_text: TextSink | None = None,
) -> Answer:
    """Answer `question` from the library. Pass a long-lived `memory` (the app does) to keep its caches
    between questions. Evidence carries its offset into its footage file (for a player to seek to) and
    its keyframe."""
    found = retrieve(memory, question, options, asked_at, strategy, k, sources, count_tokens=llm.count_tokens)
    place(memory.store, found.evidence, memory.cached("footage-starts", lambda: footage_starts(memory.store)))
    if on_evidence is not None:
        on_evidence(found.evidence)
    out = answer(memory, llm, found, question, options, on_text)
    out.extra["strategy"] = strategy
    return out


def prepare(
    memory: Memory,
    llm,
    draft: str = "",
    options: list[str] | None = None,
    strategy: str = "auto",
    k: int = 12,
    should_stop: Callable[[], bool] | None = None,
    asked_at: float | None = None,
) -> float | None:
    """Get the model ready for a question while it is being typed: its answer rules evaluated and kept
    (the first question of a session then costs what a follow-up does) and, given the question typed so
    far, the prompt answering it would send read and its reply written in advance (`LLM.prefill`).
    `should_stop` cuts the reading short (the question was asked meanwhile): what was read and written
    so far still counts. Returns the time the question was looked up as asked (`asked_at`, default
    now; None when nothing was typed or it was asked meanwhile). Asked unchanged at that time, the
    question's prompt is the one read, and a reply the model wrote to its end is the answer's, with
    nothing left to evaluate; asked otherwise, it pays for what its prompt does not share with this one."""
    llm.keep_prefix(prompt_head(options, memory.settings.answer_choice))
    if not draft.strip():
        return None
    found = retrieve(memory, draft, options, asked_at, strategy, k, count_tokens=llm.count_tokens)
    if should_stop is not None and should_stop():
        return None
    if without_model(memory, found, draft, options) is None:  # else it is answered without the model
        read_answer_ahead(llm, answer_prompt(llm, **_answerer_input(memory, found, options)), should_stop)
    return found.query.asked_at


def _span(window: TimeWindow) -> dict:
    """A window as the answer's JSON carries it."""
    return {"label": window.label, "start": window.start, "end": window.end}


def describe(window: TimeWindow) -> str:
    """A window as a person reads it: its phrase and the span it stands for ("yesterday (Tue 17 Nov
    2026)", "between 9:03 and 9:04 (Wed 18 Nov 2026, 09:03-09:04)")."""
    start, end = from_ts(window.start), from_ts(window.end)

    def day(moment: datetime) -> str:
        return f"{moment:%a} {moment.day} {moment:%b %Y}"

    midnight = datetime.min.time()
    if start.time() == midnight and end.time() == midnight and end > start:
        last = from_ts(window.end - 1)
        span = day(start) if last.date() == start.date() else f"{day(start)} to {day(last)}"
    elif start.date() == end.date():
        span = f"{day(start)}, {start:%H:%M}-{end:%H:%M}"
    else:
        span = f"{day(start)} {start:%H:%M} to {day(end)} {end:%H:%M}"
    return f"{window.label} ({span})" if window.label else span
