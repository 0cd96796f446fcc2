"""EgoCITE's multi-view atomic memory indices (EgoScheme + EgoIndex).

The LLM reads a batch of consecutive clips (caption + transcript, the wearer named) with their local
context (by default the 2 clips before the batch and the 1 after it) and writes self-contained atomic
statements about the batch's clips in four views:
- action: a named person, a specific object, direct handling; gestures; movements to a named place;
- utterance: a named speaker, a speech act, content with pronouns and ellipsis resolved
  ("I reply that the packages are outside", not "I reply yes");
- activity: the immediate goal, participants, object and location (coarse physical behaviour);
- conversation: participants and a specific topic across captions (coarse spoken interaction).
What a clip read on screen (OCR) is kept verbatim as an action statement ("I read on screen: ...") when
no statement of the clip holds it. A statement that repeats the words of another clip of its batch far
more than those of the clips it cites is pointed at that clip (`ground`). Each statement is a Unit
kind="atomic", view=<view>, spanning the clips it cites (clip_id = the first), embedded into its view's
own index "atomic-<view>". Resumable and idempotent like the records build. After a person corrected a
line, `rebuild_clips` writes the statements of its clips again, the rest of the footage's staying as they are.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from egodesk.core.settings import Settings
from egodesk.core.types import Progress
from egodesk.core.words import MIN_COVERAGE, cue_words
from egodesk.memory.indices import IndexManager
from egodesk.memory.llm_batches import ClipText, embed_documents, footage_clips, halves_of_failed, run_batches
from egodesk.memory.record_tables import BuildProgress, last_done
from egodesk.memory.schema import Clip
from egodesk.memory.store import Store, Unit
from egodesk.perception import prompts
from egodesk.perception.embedder import TextEmbedder
from egodesk.perception.llm import LLMError, chat_json
from egodesk.perception.llm_base import LLM

BUILDER = "egocite"
KIND = "atomic"
VIEWS = ("action", "utterance", "activity", "conversation")
STATEMENTS_PER_CLIP = 6  # the schema's cap (bounds a looping model's output)
TOKENS_PER_CLIP = 160
MAX_CHARS = 160
# How much more of a statement's words another clip must hold than its cited clips for `ground` to
# point the statement there: a clear margin, so a statement merely sharing a name or two stays.
GROUND_MARGIN = 0.3


def space(view: str) -> str:
    return f"atomic-{view}"


@dataclass
class Statement:
    view: str
    text: str
    clips: list[ClipText]

    @property
    def start(self) -> float:
        return min(c.start for c in self.clips)

    @property
    def end(self) -> float:
        return max(c.end for c in self.clips)


def atomic_schema(n_clips: int) -> dict:
    ids = list(range(1, n_clips + 1))
    # the clips are cited after the statement is written: asked first, a model tends to cite them all;
    # the text is cut to MAX_CHARS when parsed (a maxLength makes llama.cpp's grammar far slower to sample)
    item = {
        "type": "object",
        "properties": {
            "view": {"enum": list(VIEWS)},
            "text": {"type": "string"},
            "ids": {"type": "array", "items": {"enum": ids}, "minItems": 1, "maxItems": n_clips},
        },
        "required": ["view", "text", "ids"],
    }
    return {
        "type": "object",
        "properties": {"statements": {"type": "array", "items": item, "maxItems": STATEMENTS_PER_CLIP * n_clips}},
        "required": ["statements"],
    }


def context_window(
    batch: list[ClipText], clips: list[ClipText], before: int, after: int
) -> tuple[list[ClipText], list[ClipText]]:
    """The clips just before and just after a batch (its local context)."""
    position = {c.clip_id: i for i, c in enumerate(clips)}
    first, last = position[batch[0].clip_id], position[batch[-1].clip_id]
    return clips[max(0, first - before) : first], clips[last + 1 : last + 1 + after]


def atomic_messages(batch: list[ClipText], before: list[ClipText], after: list[ClipText], wearer: str) -> list[dict[str, str]]:
    def lines(clips: list[ClipText]) -> str:
        return "\n".join(f"- {c.render(wearer)}" for c in clips) or "- (none)"

    numbered = "\n".join(f"{i}. {c.render(wearer)}" for i, c in enumerate(batch, start=1))
    system, _ = atomic_head(wearer)
    return [
        system,
        {"role": "user", "content": prompts.render("atomic_user", before=lines(before), clips=numbered, after=lines(after))},
    ]


def atomic_head(wearer: str) -> list[dict[str, str]]:
    """What every atomic prompt starts with: its rules and example, kept evaluated by a local model."""
    return [
        {"role": "system", "content": prompts.render("atomic_system", wearer=wearer)},
        {"role": "user", "content": prompts.head("atomic_user")},
    ]


def parse_statements(data, batch: list[ClipText]) -> list[Statement]:
    """Valid statements in reply order: a known view, cited clips of the batch, non-empty text; exact
    repeats (same view and text) dropped."""
    items = data.get("statements", []) if isinstance(data, dict) else []
    out, seen = [], set()
    for item in items:
        if not isinstance(item, dict) or item.get("view") not in VIEWS:
            continue
        ids = sorted({i for i in item.get("ids") or [] if isinstance(i, int) and 1 <= i <= len(batch)})
        text = " ".join(str(item.get("text") or "").split()).strip()[:MAX_CHARS].rstrip(" ,;")
        if not ids or not text or (item["view"], text.lower()) in seen:
            continue
        seen.add((item["view"], text.lower()))
        out.append(Statement(item["view"], text, [batch[i - 1] for i in ids]))
    return ground(out, batch)


def ground(statements: list[Statement], batch: list[ClipText]) -> list[Statement]:
    """Point each statement at the clip whose words it repeats when it cites others. A small model now
    and then cites a neighbour of the clip it speaks of (test day: "Tom says the keys are in the bowl by
    the kitchen window" cited the clip 15 s before the one that said it), and the moment it then shows
    is the wrong one. A statement moves only when one clip holds at least half of its words and clearly
    more of them (GROUND_MARGIN) than any clip it cites."""
    held = {c.clip_id: cue_words(" ".join([c.caption, *c.speech, *c.screen])) for c in batch}
    for st in statements:
        words = cue_words(st.text)
        if not words:
            continue
        share = {clip_id: len(words & clip_words) / len(words) for clip_id, clip_words in held.items()}
        best = max(batch, key=lambda c: share[c.clip_id])
        cited = max(share[c.clip_id] for c in st.clips)
        if best not in st.clips and share[best.clip_id] >= MIN_COVERAGE and share[best.clip_id] >= cited + GROUND_MARGIN:
            st.clips = [best]
    return statements


def screen_statements(batch: list[ClipText], statements: list[Statement]) -> list[Statement]:
    """What each clip read on screen, verbatim, as an action statement, unless a statement of that clip
    already holds it: the LLM keeps the gist of a caption and drops the exact text of a sign."""
    out = []
    for clip in batch:
        said = " ".join(st.text.casefold() for st in statements if clip in st.clips)
        texts = [text for text in clip.screen if text.casefold() not in said]
        if texts:
            text = "I read on screen: " + ", ".join(f'"{shown}"' for shown in texts)
            out.append(Statement("action", text[:MAX_CHARS].rstrip(" ,;/"), [clip]))
    return out


def extract_statements(
    llm: LLM,
    batch: list[ClipText],
    before: list[ClipText],
    after: list[ClipText],
    wearer: str,
    failures: list[LLMError] | None = None,
) -> list[Statement]:
    """One LLM call per batch; a reply still malformed after the retries is retried as two halves
    (each keeping its own neighbours as context); a single clip that fails yields nothing, is logged
    and its error added to `failures`."""
    llm.keep_prefix(atomic_head(wearer))
    try:
        data, _ = chat_json(
            llm,
            atomic_messages(batch, before, after, wearer),
            atomic_schema(len(batch)),
            max_tokens=48 + TOKENS_PER_CLIP * len(batch),
            keep_looped=True,
        )
        return parse_statements(data, batch)
    except LLMError as exc:
        halves = halves_of_failed(batch, exc, "atomic statements", failures)
        if halves is None:
            return []
        left, right = halves
        return extract_statements(llm, left, before, right[:1], wearer, failures) + extract_statements(
            llm, right, left[-1:], after, wearer, failures
        )


def build_atomic(
    store: Store,
    index_manager: IndexManager,
    embedder: TextEmbedder,
    llm: LLM,
    footage_id: int,
    settings: Settings,
    progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict:
    """Write and index the footage's atomic statements, resuming after the last committed batch.
    Returns counts and timings of this run (statements per view, clips per second)."""
    per_view = dict.fromkeys(VIEWS, 0)

    def prepare(batch: list[ClipText], clips: list[ClipText]):
        before, after = context_window(batch, clips, settings.atomic_context_before, settings.atomic_context_after)
        failures: list[LLMError] = []
        statements = extract_statements(llm, batch, before, after, settings.wearer_name, failures)
        if len(failures) == len(batch):  # no clip got a usable reply: the LLM fails, not one clip; the
            raise failures[-1]  # build stops before this batch (kept batches stay) and the stage fails
        statements += screen_statements(batch, statements)
        return statements, embed_documents(embedder, [st.text for st in statements])

    def write(s: Session, _batch: list[ClipText], prepared, _mark: BuildProgress) -> None:
        statements, vectors = prepared
        for view, n in _store(s, index_manager, embedder.model_id, footage_id, statements, vectors).items():
            per_view[view] += n

    run = run_batches(
        store,
        footage_id,
        BUILDER,
        settings.atomic_batch_size,
        prepare,
        write,
        progress,
        should_stop,
        getattr(llm, "in_flight", 1),
    )
    index_manager.save()
    return {"footage_id": footage_id, **run.as_dict(), "statements": sum(per_view.values()), "per_view": per_view}


def _store(s: Session, index_manager: IndexManager, model_id: str, footage_id: int, statements: list[Statement], vectors) -> dict:
    """Statement units, flushed, each embedded into its view's index; how many of each view."""
    units = [
        Unit(
            footage_id=footage_id,
            clip_id=st.clips[0].clip_id,
            kind=KIND,
            view=st.view,
            start_ts=st.start,
            end_ts=st.end,
            text=st.text,
            builder=BUILDER,
            meta={"clips": [c.clip_id for c in st.clips]},
        )
        for st in statements
    ]
    s.add_all(units)
    s.flush()
    per_view = dict.fromkeys(VIEWS, 0)
    for view in VIEWS:
        rows = [i for i, st in enumerate(statements) if st.view == view]
        if rows:
            index_manager.add(space(view), [units[i].id for i in rows], np.asarray(vectors)[rows], model_id, session=s)
            per_view[view] = len(rows)
    return per_view


def _citing(s: Session, footage_id: int, clip_ids: set[int]) -> list[Unit]:
    """The footage's statements that cite any of these clips, in time order."""
    units = s.scalars(select(Unit).where(Unit.footage_id == footage_id, Unit.builder == BUILDER).order_by(Unit.start_ts, Unit.id))
    return [u for u in units if clip_ids & set((u.meta or {}).get("clips", [u.clip_id]))]


def rebuild_clips(
    store: Store,
    index_manager: IndexManager,
    embedder: TextEmbedder,
    llm: LLM,
    footage_id: int,
    clip_ids: Sequence[int],
    settings: Settings,
) -> dict:
    """Write the statements of these clips again, as one batch with its local context, after a person
    corrected a line of them, and put them in place of every statement citing them (one that also cited
    a neighbour is written again from these clips alone); the rest of the footage's statements keep their
    rows and vectors. Statements that come out the same change nothing. Only clips the build has read
    (up to its progress mark) are rebuilt: it reads the others, corrected, when it gets there. A failure
    of the LLM raises before anything is written. Returns what it did: clips, statements before and
    after, seconds."""
    started = time.perf_counter()
    wanted = set(clip_ids)
    with store.session() as s:
        done = last_done(s, footage_id, BUILDER)
        read = set(s.scalars(select(Clip.id).where(Clip.footage_id == footage_id, Clip.idx <= done, Clip.id.in_(sorted(wanted)))))
        clips = footage_clips(s, footage_id)
        old = [(u.view, u.text, list((u.meta or {}).get("clips", [u.clip_id]))) for u in _citing(s, footage_id, read)]
    batch = [c for c in clips if c.clip_id in read]
    statements: list[Statement] = []
    if batch:
        before, after = context_window(batch, clips, settings.atomic_context_before, settings.atomic_context_after)
        failures: list[LLMError] = []
        statements = extract_statements(llm, batch, before, after, settings.wearer_name, failures)
        if len(failures) == len(batch):
            raise failures[-1]
        statements += screen_statements(batch, statements)
    statements.sort(key=lambda st: st.start)  # stable: the reply's order within a moment
    new = [(st.view, st.text, [c.clip_id for c in st.clips]) for st in statements]
    report = {"clips": len(read), "statements_before": len(old), "statements": len(old), "changed": False}
    if read and new != old:
        vectors = embed_documents(embedder, [st.text for st in statements]) if statements else []
        with store.session() as s:
            stale = [u.id for u in _citing(s, footage_id, read)]
            index_manager.remove_units(stale, session=s)
            s.execute(delete(Unit).where(Unit.id.in_(stale)))
            _store(s, index_manager, embedder.model_id, footage_id, statements, vectors)
        index_manager.save()
        report.update(statements=len(statements), changed=True)
    return {**report, "seconds": round(time.perf_counter() - started, 3)}


def clear_atomic(store: Store, index_manager: IndexManager, footage_id: int) -> None:
    """Forget the footage's atomic statements and progress (before a rebuild from scratch)."""
    with store.session() as s:
        ids = s.scalars(select(Unit.id).where(Unit.footage_id == footage_id, Unit.builder == BUILDER)).all()
        index_manager.remove_units(ids, session=s)
        s.execute(delete(Unit).where(Unit.id.in_(ids)))
        s.execute(delete(BuildProgress).where(BuildProgress.footage_id == footage_id, BuildProgress.builder == BUILDER))
    index_manager.save()
