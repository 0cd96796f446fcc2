"""The one ask path: the app, `egodesk ask` and `egodesk eval` answer a question through here, so the
benchmarks measure what ships.

question -> one request (`AskRequest`: checked and shortened once, its time asked, how to search) ->
analysed against the library's days (its time window) -> retrieved by a strategy (every strategy
searches inside the window) -> answered from the evidence -> evidence ordered for people (cited first,
then by relevance, each with its rank) with offsets into its footage file for the player.

`Asker` is the path as a library's users take it: a question read ahead as it is typed, then asked,
each at the time kept for it (its memo). A caller that shows the answer as it comes passes
`on_evidence` (the moments found, by relevance, as soon as retrieval is done: before the model starts)
and `on_text` (the answer's words as they are written).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache
from typing import Any

from egodesk.core.settings import Settings
from egodesk.core.timeutil import from_ts, now_ts
from egodesk.core.types import ABSTENTION, Answer, Evidence
from egodesk.memory.queries import footage_starts, place
from egodesk.perception.llm import TextSink
from egodesk.perception.llm_base import LLM
from egodesk.reasoning.answer_checks import asked_about, people_order, with_when
from egodesk.reasoning.answerer import answer_prompt, answer_question, read_answer_ahead
from egodesk.reasoning.facts import attach_facts, with_voices
from egodesk.reasoning.prompt import prompt_head
from egodesk.retrieval.base import Memory, Query
from egodesk.retrieval.people import Meetings, meetings, voices_during
from egodesk.retrieval.question import QuestionAnalysis
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


@dataclass(frozen=True)
class AskRequest:
    """One question as every step of the ask path reads it, made once (`make`): its text checked and on
    one line, shortened for retrieval and the answerer, its options, the time it counts as asked, how to
    search, and what the answer prompt may hold. Retrieval, the answer and its read-ahead take this one
    value, so they cannot read the question differently, and the read-ahead's prompt is the answer's."""

    asked: str  # as the person wrote it: the answer repeats it
    question: str  # on one line (`check_question`)
    short: str  # as retrieval and the answerer read it (`shorten`: cut when it was long)
    options: tuple[str, ...] | None  # None: an open question
    asked_at: float  # wall-clock seconds, as stored
    strategy: str
    k: int
    sources: tuple[str | int, ...] | None  # footage titles or ids to search; None: the whole library
    online: bool  # memory from after `asked_at` is not used
    budget_tokens: int  # the answer prompt's evidence budget
    choice: str  # a multiple-choice answer is the option's "text" or its "letter"

    @classmethod
    def make(
        cls,
        question: str,
        settings: Settings,
        count_tokens: Callable[[str], int] | None = None,
        options: Sequence[str] | None = None,
        asked_at: float | None = None,
        strategy: str = "auto",
        k: int = 12,
        sources: Sequence[str | int] | None = None,
        online: bool = True,
    ) -> AskRequest:
        """The request for `question`: an empty one is refused here, before `count_tokens` (which may load
        the model) is called. `asked_at` defaults to now, taken before the question is measured, so a
        model loading meanwhile does not make it later; `count_tokens` defaults to a rough count (no
        model at hand). The answer prompt's budget and form are the `settings`'."""
        text = check_question(question)
        at = now_ts() if asked_at is None else asked_at
        return cls(
            asked=question,
            question=text,
            short=shorten(text, count_tokens or _rough_tokens),
            options=tuple(options) if options else None,
            asked_at=at,
            strategy=strategy,
            k=k,
            sources=tuple(sources) if sources is not None else None,
            online=online,
            budget_tokens=settings.answer_prompt_tokens,
            choice=settings.answer_choice,
        )

    @property
    def option_list(self) -> list[str] | None:
        """The options as the answerer and retrieval take them."""
        return list(self.options) if self.options else None

    @property
    def key(self) -> tuple[str, tuple[str, ...] | None]:
        """What makes two requests the same question: its text on one line and its options."""
        return self.question, self.options


@dataclass
class Retrieval:
    """What a strategy found for a request: the evidence best first, each with its 1-based rank."""

    request: AskRequest
    query: Query
    evidence: list[Evidence]
    seconds: float

    @property
    def window(self) -> TimeWindow | None:
        return self.query.window


def retrieve(memory: Memory, request: AskRequest) -> Retrieval:
    """Rank the library's memory for a request; when it is `online`, memory from after its time asked is
    not used."""
    cutoff = request.asked_at if request.online else None
    query = Query(request.short, request.option_list, request.asked_at, request.sources, request.k, cutoff, days=memory.days())
    started = time.perf_counter()
    evidence = make_strategy(request.strategy, memory).retrieve(query)
    for rank, ev in enumerate(evidence, start=1):
        ev.rank = rank
    return Retrieval(request, query, evidence, time.perf_counter() - started)


def answer(memory: Memory, llm: LLM, found: Retrieval, on_text: TextSink | None = None) -> Answer:
    """Answer from what was found; a question whose time window holds no footage is told so."""
    request, query = found.request, found.query
    if (settled := without_model(memory, found)) is not None:
        out = settled
    else:
        shown, noted = prompt_inputs(memory, found)
        out = answer_question(
            llm,
            request.short,
            shown,
            request.option_list,
            request.asked_at,
            request.budget_tokens,
            request.choice,
            on_text,
            heard=noted,
        )
        out.evidence = people_order(out, shown)
        if query.analysis.asks_when and not query.analysis.asks_stated_time and not out.abstained and not request.options:
            out.text = with_when(out, asked_about(query.analysis), [t for _, starts in noted for t in starts])
    out.question = request.asked
    if request.short != request.question:
        out.extra["question_shortened"] = request.short
    if query.window is not None:
        out.extra["window"] = _span(query.window)
    if query.analysis.recalled is not None:  # before the first footage: what was said of it later
        out.extra["recalled"] = _span(query.analysis.recalled)
    out.timings["retrieval_s"] = found.seconds
    return out


def read_ahead(memory: Memory, llm: LLM, request: AskRequest, should_stop: Callable[[], bool] | None = None) -> bool:
    """Read the prompt answering `request` would send and write its reply in advance (`LLM.prefill`), so
    the answer, asked as this request, costs nothing more to evaluate. The prompt is built as `answer`
    builds it (the same request, evidence and facts). False when `should_stop` said so after retrieval
    (the question was asked meanwhile); what was read before a stop still counts."""
    found = retrieve(memory, request)
    if should_stop is not None and should_stop():
        return False
    if without_model(memory, found) is None:  # else it is answered without the model
        shown, noted = prompt_inputs(memory, found)
        prompt = answer_prompt(
            llm,
            request.short,
            shown,
            request.option_list,
            request.asked_at,
            request.budget_tokens,
            request.choice,
            noted,
        )
        read_answer_ahead(llm, prompt, should_stop)
    return True


def without_model(memory: Memory, found: Retrieval) -> Answer | None:
    """The abstention, when the model is not to be asked: the question's time window holds no footage.

    Nothing else is refused unread: what a question asks about may be absent from every line found and
    still be there, misheard past any sound-alike ("the meta points" for "the vet appointment")."""
    if (empty := empty_window(memory, found.query)) is not None:
        return Answer(
            found.request.asked, f"{ABSTENTION} You have no footage from {describe(empty)}.", [], abstained=True, grounded=False
        )
    return None


def prompt_inputs(memory: Memory, found: Retrieval) -> tuple[list[Evidence], list[tuple[str, tuple[float, ...]]]]:
    """What the answer prompt is built from besides the question: the evidence with the facts its units
    lost and the named voices heard during them (`reasoning.facts`), and the note of when each named
    person the question names was heard (`noted`)."""
    met = meetings(memory.store, found.query)
    shown = attach_facts(memory.catalog(), found.evidence, [m.name for m in met])
    shown = with_voices(shown, voices_during(memory.store, [(ev.footage_id, ev.start, ev.end) for ev in shown]))
    return shown, noted(met, found.query.analysis)


def noted(met: list[Meetings], analysis: QuestionAnalysis) -> list[tuple[str, tuple[float, ...]]]:
    """When each named person the question names was heard (`retrieval.people.meetings`), for the prompt's
    note. A question asking what was said or done (`asks_content`) is told only of a person not heard at
    all in its time: beside "What did Priya say about the rocket?" the times she was heard led the model to
    answer with one of her lines "on both occasions", while "What did Declan say on Tuesday?" needs to
    know he was not heard then."""
    return [(m.name, m.starts) for m in met if not (analysis.asks_content and m.starts)]


def empty_window(memory: Memory, query: Query) -> TimeWindow | None:
    """The time window the question names, when no footage was recorded in it (the model would answer
    from another day)."""
    return query.window if query.window is not None and not memory.scope(query).any() else None


def ask(
    memory: Memory,
    llm: LLM,
    request: AskRequest,
    on_evidence: Callable[[list[Evidence]], None] | None = None,
    on_text: TextSink | None = None,
) -> Answer:
    """Answer a request from the library. Pass a long-lived `memory` (the app does) to keep its caches
    between questions. Evidence carries its offset into its footage file (for a player to seek to) and
    its keyframe."""
    found = retrieve(memory, request)
    place(memory.store, found.evidence, memory.cached("footage-starts", lambda: footage_starts(memory.store)))
    if on_evidence is not None:
        on_evidence(found.evidence)
    out = answer(memory, llm, found, on_text)
    out.extra["strategy"] = request.strategy
    return out


# A question read ahead or asked within this long of the time its prompt was first read counts as asked
# at that time: as typed, or as asked before.
ASKED_AT_KEPT_S = 120.0


@dataclass(frozen=True)
class _PromptTime:
    """When a question's prompt (read ahead as it was typed, or to answer it) says it was asked."""

    asked_at: float
    read_at: float  # the Asker's clock when that time was now


class Asker:
    """The ask path as a library's users take it (the app, `egodesk ask`): a question typed is read
    ahead (`prepare`), a question asked is answered (`ask`), and the time each counts as asked is kept.

    The asked-at memo: a question whose prompt was read a moment ago (within ASKED_AT_KEPT_S; read
    ahead as typed, or to answer it) is asked at that time, unless a time is given. Its prompt is then
    the one read, to the second, and gets the reply written to it (`LocalLLM._written_before`): a
    question read ahead and asked costs no new reading, and one asked again gets the same answer at
    once. The time kept is never older than ASKED_AT_KEPT_S, however often the question is asked.

    `engines` gives the library's memory and model at each question (a re-embedding elsewhere may have
    replaced them since), opened only once the question is checked; `settings` the library's own (its
    strategy and evidence count, the answer prompt's budget and form); `in_flight` wraps each question's
    work (`asking.question_in_flight`: LLM memory building waits); `clock` measures the memo's age."""

    def __init__(
        self,
        engines: Callable[[], tuple[Memory, Any]],
        settings: Callable[[], Settings],
        in_flight: Callable[[], AbstractContextManager[object]] = nullcontext,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._engines = engines
        self._settings = settings
        self._in_flight = in_flight
        self._clock = clock
        self._times: dict[tuple[str, tuple[str, ...] | None], _PromptTime] = {}

    @classmethod
    def over(cls, memory: Memory, llm: LLM, clock: Callable[[], float] = time.monotonic) -> Asker:
        """An Asker over a memory and model already open, with the memory's settings."""
        return cls(lambda: (memory, llm), lambda: memory.settings, clock=clock)

    def ask(
        self,
        question: str,
        options: Sequence[str] | None = None,
        asked_at: float | None = None,
        strategy: str | None = None,
        k: int | None = None,
        sources: Sequence[str | int] | None = None,
        on_evidence: Callable[[list[Evidence]], None] | None = None,
        on_text: TextSink | None = None,
    ) -> Answer:
        """Answer a question (`ask`, which says what `on_evidence` and `on_text` are told as the answer
        comes). An empty question is refused before any model is loaded. `asked_at` defaults to the
        time kept for the question (it was read ahead unchanged, or asked, a moment ago), else now;
        that time is kept for it."""
        now = self._clock()  # the memo's time: the question's, not its model's loading
        with self._in_flight():
            engines = cache(self._engines)  # opened at the first need: after the question is checked
            request = self._request(question, options, asked_at, strategy, k, sources, lambda t: engines()[1].count_tokens(t))
            if asked_at is None:
                request = self._as_asked_before(request, now)
                self._remember(request, now)
            memory, llm = engines()
            return ask(memory, llm, request, on_evidence, on_text)

    def prepare(
        self,
        draft: str = "",
        options: Sequence[str] | None = None,
        should_stop: Callable[[], bool] | None = None,
        asked_at: float | None = None,
    ) -> float | None:
        """Get the model ready for a question while it is being typed: its answer rules evaluated and kept
        (the first question of a session then costs what a follow-up does) and, given the question typed
        so far, the prompt answering it read and its reply written in advance (`read_ahead`).
        `should_stop` cuts the reading short (the question was asked meanwhile). The draft counts as
        asked at `asked_at`, else at the time kept for it, else now; that time is kept for it and
        returned (None when nothing was typed or it was asked meanwhile). Asked unchanged, the question's
        prompt is the one read; asked otherwise, it pays for what its prompt does not share with this
        one."""
        now = self._clock()
        with self._in_flight():
            memory, llm = self._engines()
            llm.keep_prefix(prompt_head(list(options) if options else None, self._settings().answer_choice))
            if not draft.strip():
                return None
            request = self._request(draft, options, asked_at, None, None, None, llm.count_tokens)
            if asked_at is None:
                request = self._as_asked_before(request, now)
            if not read_ahead(memory, llm, request, should_stop):
                return None
        self._remember(request, self._clock())  # read now
        return request.asked_at

    def asked_at(self, question: str, options: Sequence[str] | None = None) -> float | None:
        """The time kept for a question: when its prompt was read a moment ago, as typed or asked."""
        kept = self._times.get((check_question(question), tuple(options) if options else None))
        return kept.asked_at if kept is not None and self._clock() - kept.read_at <= ASKED_AT_KEPT_S else None

    def _request(
        self,
        question: str,
        options: Sequence[str] | None,
        asked_at: float | None,
        strategy: str | None,
        k: int | None,
        sources: Sequence[str | int] | None,
        count_tokens: Callable[[str], int],
    ) -> AskRequest:
        """The request for a question with the library's settings: its strategy and evidence count unless
        given."""
        settings = self._settings()
        return AskRequest.make(
            question, settings, count_tokens, options, asked_at, strategy or settings.strategy, k or settings.top_k, sources
        )

    def _as_asked_before(self, request: AskRequest, now: float) -> AskRequest:
        """The request at the time kept for its question, if one is."""
        kept = self._times.get(request.key)
        if kept is None or now - kept.read_at > ASKED_AT_KEPT_S:
            return request
        return replace(request, asked_at=kept.asked_at)

    def _remember(self, request: AskRequest, now: float) -> None:
        """Keep the time the request's prompt says it was asked, read at `now`; a time kept before stays as
        old as it was."""
        before = self._times.get(request.key)
        read_at = before.read_at if before is not None and before.asked_at == request.asked_at else now
        self._times = {key: t for key, t in self._times.items() if now - t.read_at <= ASKED_AT_KEPT_S}
        self._times[request.key] = _PromptTime(request.asked_at, read_at)


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
