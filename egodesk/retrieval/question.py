"""Question analysis: temporal intent (first/last, after/before, habit), the time window it names (see
`timewindow`), and the cues (actions, objects, people) the strategies search with.

Deterministic on purpose (regular expressions and word lists): it runs on every question in
milliseconds, gives the same answer every time, and is testable. EgoCITE's drafting agent and
Imprint's cue extraction use an LLM for this; an LLM can refine the result, never replace it.

It lives in retrieval (not reasoning) because the strategies need it and layers import downwards only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from egodesk.core.timeutil import from_ts
from egodesk.core.words import IRREGULAR, STOPWORDS, VERBS, lemma
from egodesk.retrieval.timewindow import MONTHS, WEEKDAYS, PhraseFinder, TimeWindow, resolve_window

RECALLED_SPAN = 28 * 86400  # shorter spans before the footage ("on Monday", "last week") stay windows: no footage then

QUESTION_WORDS = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how"}
NOT_NAMES = STOPWORDS | QUESTION_WORDS | set(MONTHS) | set(WEEKDAYS) | {"i", "im", "ive", "id", "ill", "lgbtq", "ok", "okay"}


@dataclass
class QuestionAnalysis:
    text: str
    order: str | None = None  # "first" | "last": the earliest / latest occurrence of the event
    relation: str | None = None  # "after" | "before": what happened next to / before an anchor event
    anchor: str = ""  # the event a relation or an order refers to ("take paper")
    immediate: bool = False  # "right after", "just before": the moment next to the anchor, not any later one
    habit: bool = False  # "usually", "how often": evidence spread over time, not one moment
    recency: bool = False  # "recently", "lately"
    asks_when: bool = False
    # "What did Tom say about the bus?", "Who told me ...?": what was said, done or seen, not whether,
    # when or how often something happened ("Did I meet Tom?", "How many times did I talk to Sam?").
    asks_content: bool = False
    # "When is the appointment?", "What time does the train leave?": a time someone said or wrote, not
    # the time of a recorded moment ("When did I see a cat?"); the answer is what was said or written.
    asks_stated_time: bool = False
    window: TimeWindow | None = None
    # A span of a month or more that ends before the library's first footage ("last year", "four years
    # ago"): nothing was recorded then, so the question asks about a time talked of later, and every
    # moment is searched (the answer says so).
    recalled: TimeWindow | None = None
    focus: str = ""  # the question's content without temporal phrases: the semantic query
    actions: list[str] = field(default_factory=list)
    objects: list[str] = field(default_factory=list)
    people: list[str] = field(default_factory=list)

    @property
    def temporal(self) -> bool:
        return bool(self.order or self.relation or self.habit or self.recency or self.window)


_CONTENT = re.compile(r"\s*(?:what|which|who|whom|whose|why|where|how(?!\s+(?:many|often)\b))\b")
_ORDER_LAST = re.compile(
    r"\b(?:did|do|have|has|had|was|were)\s+\w+\s+last\b(?!\s+(?:week|month|year|night|weekend))"
    r"|\b(?:the\s+)?(?:last|latest|most\s+recent(?:ly)?|final)\s+(?:time|occasion|thing|one)\b"
    r"|\bmost\s+recently\b|\bthe\s+last\b(?!\s+(?:week|month|year|night|weekend|\d))"
)
_ORDER_FIRST = re.compile(
    r"\b(?:did|do|have|has|had|was|were)\s+\w+\s+first\b"
    r"|\b(?:the\s+)?(?:first|earliest|very\s+first)\s+(?:time|occasion|thing|one)\b"
    r"|\bat\s+first\b|\binitially\b|\bearliest\b|\bthe\s+first\b"
)
_HABIT = re.compile(
    r"\b(?:usually|normally|typically|generally|regularly|habitually|tend\s+to|how\s+often|how\s+many\s+times"
    r"|often|every\s+(?:day|morning|evening|night|week)|each\s+(?:day|morning)|habit|routine|always)\b"
)
_RECENCY = re.compile(r"\b(?:recently|lately|these\s+days|nowadays)\b")
_AFTER = re.compile(r"\b(?:(?:right|just|immediately|shortly|soon)\s+)?after(?:wards)?\b|\bnext\b|\bfollowing\b|\bthen\b")
_IMMEDIATE = re.compile(r"(?:right|just|immediately|shortly|soon)\b")
_BEFORE = re.compile(r"\b(?:(?:right|just|immediately|shortly)\s+)?before\b|\bprior\s+to\b|\bpreceding\b")
# "right after breakfast" names a window (the day from breakfast on) and an event to follow; a bare
# "after breakfast" only the window.
_MEAL_RELATION = re.compile(r"\b(?:right|just|immediately|shortly)\s+(after|before)\s+(breakfast|lunch|dinner|supper)\b")
_SCAFFOLD = re.compile(
    r"^\s*(?:when|what|where|who|which|how|why)\b(?:\s+(?:was|were|did|do|does|is|are|have|had|has))?(?:\s+(?:i|we))?\s*", re.I
)
# A when-question in the present or future about something other than the wearer's own doing asks for a
# time that was said or written; "when do I usually ..." (a habit) and "when is the last time I ..." (an
# order) still ask about the recorded moments.
_STATED_TIME = re.compile(
    r"^\s*(?:by\s+)?(?:when|what\s+time|what\s+day|at\s+what\s+time)\s+"
    r"(?:(?:is|are|will|'s|should|must|shall|does)\b|do\s+(?!i\b|we\b))"
)
_DID_THIS = re.compile(r"\b(?:i|we)\s+did\s+(?:this|that)\s*:?\s*", re.I)


def _people(question: str) -> list[str]:
    names = []
    for match in re.finditer(r"\b([A-Z][a-z]+(?:[A-Z][a-z]+)?)(?:'s)?\b", question):
        word = match.group(1)
        if word.lower() in NOT_NAMES or (match.start() == 0 and word.lower() in STOPWORDS | QUESTION_WORDS):
            continue
        if word not in names:
            names.append(word)
    return names


def _cues(focus: str, people: list[str]) -> tuple[list[str], list[str]]:
    """Actions (verb lemmas) and objects (remaining content words) of the focus phrase."""
    lowered_people = {p.lower() for p in people}
    actions: list[str] = []
    objects: list[str] = []
    for word in re.findall(r"[a-z][a-z'-]*", focus.lower()):
        word = word.removesuffix("'s")
        if word in lowered_people or word in STOPWORDS or word in QUESTION_WORDS:
            continue
        base = lemma(word)
        target = actions if (base in VERBS and not objects) or word in IRREGULAR else objects
        if base not in target:
            target.append(base if target is actions else word)
    return actions, objects


def analyze(question: str, asked_at: float | None = None, days: Sequence[tuple[float, float]] = ()) -> QuestionAnalysis:
    """Temporal intent, time window (relative to `asked_at`, clipped to it, and to the library's `days`
    of footage, see `resolve_window`) and cues of a question."""
    text = " ".join(question.split())
    f = PhraseFinder(text.lower())
    out = QuestionAnalysis(text=text, people=_people(text))
    out.asks_when = bool(re.match(r"\s*(when|what\s+time|what\s+day|what\s+date|at\s+what\s+time|how\s+long\s+ago)\b", f.text))
    now = from_ts(asked_at) if asked_at is not None else datetime.now().replace(microsecond=0)
    out.window = resolve_window(f, now, days)
    if out.window is not None and asked_at is not None and out.window.end > asked_at:
        out.window = TimeWindow(out.window.start, max(asked_at, out.window.start), out.window.label)
    if out.window is not None and days and out.window.end <= days[0][0] and out.window.end - out.window.start >= RECALLED_SPAN:
        out.window, out.recalled = None, out.window
    if f.search(_ORDER_LAST):
        out.order = "last"
    elif f.search(_ORDER_FIRST):
        out.order = "first"
    out.habit = bool(f.search(_HABIT))
    out.asks_content = bool(_CONTENT.match(f.text)) and not out.asks_when
    out.recency = bool(f.search(_RECENCY))
    out.asks_stated_time = bool(_STATED_TIME.match(f.text)) and not (out.order or out.habit)
    relation = None
    for name, pattern in (("after", _AFTER), ("before", _BEFORE)):
        if m := f.search(pattern):
            relation = (name, m)
            break
    rest = f.remainder()
    if ":" in rest:  # "... I did this: take paper" names the event after the colon
        head, _, tail = rest.rpartition(":")
        rest = tail.strip() or head
    rest = _DID_THIS.sub(" ", rest)
    out.focus = " ".join(_SCAFFOLD.sub("", rest).strip(" ?.!").split())
    meal = _MEAL_RELATION.search(text.lower()) if relation is None else None
    if meal is not None:
        out.relation, out.anchor, out.immediate = meal[1], meal[2], True
    elif relation is not None:
        out.relation = relation[0]
        out.immediate = bool(_IMMEDIATE.match(relation[1][0]))
        after_phrase = f.text[relation[1].end() :]
        anchor = (
            after_phrase.rpartition(":")[2] if ":" in after_phrase else _ORDER_FIRST.sub(" ", _ORDER_LAST.sub(" ", after_phrase))
        )
        out.anchor = " ".join(_DID_THIS.sub(" ", anchor).strip(" ?.!").split())
    elif out.order:
        out.anchor = out.focus
    out.actions, out.objects = _cues(out.anchor or out.focus, out.people)
    return out
