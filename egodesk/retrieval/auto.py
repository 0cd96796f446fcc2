"""`auto`: the specialised rankings fused with plain fusion, so that no question is sent away from the
moments that hold its words.

Routing a question to one strategy by its wording lost on footage nobody tuned for: a clock-time
question went to `timeaware` alone, and "when did I see a cat?" never reached the clip whose caption
said "cat". Instead every member that the library can serve ranks the question and the rankings are
fused per moment: a clip's caption, its transcript and the atomic statements cut from it are one
moment, so members that rank different units of one clip agree. Each member gives a moment its weight
times the moment's share of the member's score range (`score_shares`: 1 at its top, 0 at the last unit
it pooled), not a reciprocal rank: a member whose top stands far above the rest is sure, one with a
close runner-up is not, and ranks alone cannot tell the two apart.
- `hybrid`: dense + BM25 over the sub-chunks, the plain fusion every other ranking must not lose to;
- `context`: dense + BM25 over whole captions and transcript turns with neighbour smoothing
  (LoCoMo's turns answer one another);
- `flat`: the text embedder's cosine alone over whole captions and turns: the dense floor, which beats
  the fusion without it on LoCoMo's multi-hop questions;
- `timeaware`: EgoCITE's rounds over the atomic views, with cue-word coverage and chronological
  curation for "first/last time", "right after", "usually";
- `people`: for a question naming a person whose voice was named, `context` inside the footage where
  that voice was heard (`retrieval/people.py`): their words are theirs even when their name was not said.
Weights: `context` 2, `people` 3.5, `flat` 1.5, `timeaware` 1 for a question with temporal intent ("last time", "right
after", "usually", "when", a named time); a member of weight 0 (`hybrid`, and `timeaware` for the rest) is
not run, because on the 200-hour scale library each member's first use costs seconds. `people` weighs as
much as the two word rankings together: where the person named was heard is as strong a cue as the words,
and their words may be lost ("How many times did I talk to Declan?": his words were never recognised, and
"I talk about ..." statements with others outranked the meeting he spoke in).
The moment right after a strong match gets CARRY of its score (`carried`).
A member that pinpointed a moment (`timeaware` found a first/last occurrence holding the
event's words, and what came right after it) is sure of this question: the pinpointed moment stays on
top and that member's weight is multiplied by PINPOINT_WEIGHT. That is a decision from how well the units
match the question; it puts epic-dev's one right repeat of "take paper" first and keeps its runners-up
(the latest occurrences) above moments that merely mention paper.
The LLM reranker (Parent-Rerank) is left out: its judging costs about as much as the answer.

Now: LoCoMo-200 Hit@5 0.753 (Hit@1 0.424) with nomic-embed-text-v1.5. The figures behind each rule, before
and after: docs/benchmarks.md, "Figures moved from the code".
"""

from __future__ import annotations

from egodesk.core.types import Evidence
from egodesk.core.words import cue_coverage, cue_words
from egodesk.retrieval.base import Query, Strategy
from egodesk.retrieval.context import Context
from egodesk.retrieval.parent import Flat, Hybrid
from egodesk.retrieval.people import People
from egodesk.retrieval.timeaware import TimeAware

MEMBERS: tuple[type[Strategy], ...] = (Hybrid, Context, Flat, TimeAware, People)
WEIGHTS = {"hybrid": 0.0, "context": 2.0, "flat": 1.5, "timeaware": 1.0, "people": 3.5}
PLAIN_TIMEAWARE = 0.0  # timeaware's weight for a question without temporal intent
PINPOINT_WEIGHT = 3.0  # a member sure of the moment outweighs the others agreeing on another
ANCHOR_POOL = 8  # the fused top moments searched for the event of "right after X"
FOLLOWING = 2  # moments put right after the anchor of "what did I do right after X"
POOL_FACTOR = 2  # each member ranks this many times k, so a moment low in one list can still be lifted
CARRY = 0.1  # the share of a moment's fused score that the moment right after it gets (`carried`)
CARRY_GAP = 60.0  # seconds from one moment's start to the next one's, at most, for the next to continue it


class Auto(Strategy):
    name = "auto"

    def members(self) -> list[Strategy]:
        return [s for s in (cls(self.memory) for cls in MEMBERS) if s.available()]

    def available(self) -> bool:
        return bool(self.members())

    def retrieve(self, query: Query) -> list[Evidence]:
        catalog = self.memory.catalog()
        pool = Query(
            query.question,
            query.options,
            query.asked_at,
            query.sources,
            POOL_FACTOR * query.k,
            query.cutoff,
            query.days,
            _analysis=query.analysis,
        )
        ranks: dict[int, dict[str, int]] = {}  # moment -> member -> its best rank there
        shares: dict[int, dict[str, float]] = {}  # moment -> member -> how close its best unit came to the member's top
        best: dict[int, tuple[int, int, Evidence]] = {}  # moment -> (rank, member order, the unit shown for it)
        pinned: list[int] = []
        weights: dict[str, float] = {}
        for order, member in enumerate(self.members()):
            if not self._weight(member.name, query):
                continue  # a member that cannot count is not run: on a 200-hour library its first use costs seconds
            found = member.retrieve(pool)
            weights[member.name] = self._weight(member.name, query) * (
                PINPOINT_WEIGHT if any(ev.pinpointed for ev in found) else 1.0
            )
            for rank, (ev, share) in enumerate(zip(found, score_shares(found)), start=1):
                moment = self._moment(catalog, ev)
                ranks.setdefault(moment, {}).setdefault(member.name, rank)
                shares.setdefault(moment, {}).setdefault(member.name, share)
                if ev.pinpointed and moment not in pinned:
                    pinned.append(moment)
                    best[moment] = (0, order, ev)  # the unit that was pinpointed is the one shown
                elif moment not in best or (rank, order) < best[moment][:2]:
                    best[moment] = (rank, order, ev)
        fused = carried(
            {m: sum(weights[name] * share for name, share in member_shares.items()) for m, member_shares in shares.items()},
            {m: (b[2].source, b[2].start) for m, b in best.items()},
        )
        ordered = pinned + sorted((m for m in fused if m not in pinned), key=lambda m: (-fused[m], best[m][0], m))
        if query.analysis.relation and ordered:
            ordered = self._follow(catalog, query, ordered, best, fused, pin=not pinned and query.analysis.immediate)
        out = []
        for moment in ordered[: query.k]:
            ev = best[moment][2]
            ev.ranks = {**ev.ranks, **ranks.get(moment, {})}
            ev.score, ev.strategy = fused.get(moment, 0.0), f"auto:{ev.strategy}"
            out.append(ev)
        return out

    def _follow(
        self, catalog, query: Query, ordered: list[int], best: dict, fused: dict[int, float], pin: bool = False
    ) -> list[int]:
        """ "What did I do right after X": the moments that came next (before) X's best moment follow it.

        The fused ranking finds X; what followed it shares none of X's words, so no member ranks it
        ("after the meeting" -> the cafe, filmed in the next file), and a strategy's own neighbours of
        one occurrence were outvoted in the fusion (test day: none of 3 in the top 5). With `pin` (the
        question asks for the moment right after or before, and no member pinpointed one), X's moment and
        those next to it are pinpointed: the answer rests on them alone. Shown among the day's other
        moments, a small model answered with X itself or a later moment (test day: 1 of 3 right)."""
        qa = query.analysis
        anchor = self._anchor(catalog, ordered, qa.anchor)
        row = catalog.row(best[anchor][2].unit_id)
        if row is None:
            return ordered
        rows = catalog.following_moments(row, self.memory.scope(query), qa.relation == "after", FOLLOWING)
        nexts = [catalog.moment(r) for r in rows]
        for r, moment in zip(rows, nexts):
            if moment not in best:
                best[moment] = (0, 0, catalog.evidence(r, fused.get(anchor, 0.0), "following"))
        if pin and nexts:
            for moment, role in ((anchor, "anchor"), *((m, qa.relation or "") for m in nexts)):
                best[moment][2].pinpointed, best[moment][2].role = True, role
        return [anchor, *nexts, *(m for m in ordered if m != anchor and m not in nexts)]

    @staticmethod
    def _anchor(catalog, ordered: list[int], event: str) -> int:
        """X's moment: among the fused top, the one whose units hold the most of X's words (the whole
        question's best match may share none: "after the project Atlas meeting" fused the keys clip
        first, the meeting's "discuss the budget and the meeting time" third); ties go to the fused
        order."""
        cues = cue_words(event)
        if not cues:
            return ordered[0]
        top = ordered[:ANCHOR_POOL]
        cover = [max((cue_coverage(cues, catalog.text[r]) for r in catalog.moment_rows(m)), default=0.0) for m in top]
        return top[max(range(len(top)), key=lambda i: (cover[i], -i))]

    @staticmethod
    def _weight(member: str, query: Query) -> float:
        qa = query.analysis
        temporal = bool(qa.order or qa.relation or qa.window or qa.habit or qa.asks_when)
        return PLAIN_TIMEAWARE if member == "timeaware" and not temporal else WEIGHTS[member]

    @staticmethod
    def _moment(catalog, ev: Evidence) -> int:
        row = catalog.row(ev.unit_id)
        return -ev.unit_id if row is None else catalog.moment(row)


def carried(fused: dict[int, float], at: dict[int, tuple[str, float]]) -> dict[int, float]:
    """Each fused moment plus CARRY of the score of the one right before it (same source, starting at
    most CARRY_GAP earlier). What follows a strong match continues it: the reply to what was asked in
    a conversation, what happened next on screen. The answer shares few words with the question, so
    members rank the question's own turn first and its reply sixth (LoCoMo "What pet does Caroline
    have?": the turn asking about pets first, the one naming the guinea pig sixth)."""
    out = dict(fused)
    moments = sorted(fused, key=lambda m: at[m])  # by source, then start
    for before, after in zip(moments, moments[1:]):
        if at[after][0] == at[before][0] and 0.0 < at[after][1] - at[before][1] <= CARRY_GAP:
            out[after] += CARRY * fused[before]
    return out


def score_shares(found: list[Evidence]) -> list[float]:
    """Each unit's score as a share of the way from the member's last pooled unit (0) to its first (1),
    never above a unit ranked before it (a member that reorders by time keeps its order). A member
    whose top stands far above the rest gives the rest little; ranks alone would give them as much as
    after a close call."""
    if not found:
        return []
    held = [found[0].score]
    for ev in found[1:]:
        held.append(min(held[-1], ev.score))
    low, high = held[-1], held[0]
    return [1.0] * len(held) if high <= low else [(s - low) / (high - low) for s in held]
