"""The resumable batch loop shared by the LLM memory builders (interaction records, atomic statements).

A footage's clips with any text (caption and/or transcript) are taken in clip order and handed to the
builder a batch at a time: `prepare` does the slow part outside any transaction (LLM, embedder), then
`write` stores the batch's units in ONE transaction together with the progress mark (the last clip
done). Killing the process loses at most the batch in flight and duplicates nothing; a rerun starts
after the last committed batch, and a finished build reruns as a no-op. `should_stop()` is asked
between batches (cancel).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from egodesk.core.faults import fault_point
from egodesk.core.types import Progress
from egodesk.memory.record_tables import BuildProgress, get_progress, last_done
from egodesk.memory.schema import Caption, Clip, Keyframe, TranscriptSegment
from egodesk.memory.speech import clip_speech
from egodesk.memory.store import Store
from egodesk.perception import prompts
from egodesk.perception.embedder import TextEmbedder
from egodesk.perception.llm import LLMError
from egodesk.perception.ocr import screen_texts

log = logging.getLogger(__name__)


@dataclass
class ClipText:
    """What one clip says in words: its caption (or narration) and its transcript lines."""

    clip_id: int
    idx: int
    start: float
    end: float
    caption: str = ""
    speech: list[str] = field(default_factory=list)
    screen: list[str] = field(default_factory=list)  # the texts its keyframes read (OCR), each once

    def shown_caption(self) -> str:
        """The caption as the builders show it: without a described caption's guesses from image labels
        (on the test day they became records such as "I see planetarium at low confidence", each costing
        reply tokens and none an interaction), and, beside the clip's own speech lines, without its quote
        of the transcript (the spoken words would be in the prompt twice)."""
        caption = prompts.UNSURE_SENTENCE.sub("", self.caption)
        if self.speech:
            caption = prompts.HEARD_PART.sub("", caption)
        return " ".join(caption.split())

    def render(self, wearer: str, numbered: bool = False) -> str:
        """The clip as the LLM reads it, the wearer's name prepended (Imprint: it lets the model
        resolve "I" to a person); `numbered` numbers the speech lines so a reply can point at one."""
        parts = [f"(wearer: {wearer})"]
        if caption := self.shown_caption():
            parts.append(caption)
        if self.speech:
            parts.append(
                "Speech: "
                + " ".join(f'[{n}] "{line}"' if numbered else f'"{line}"' for n, line in enumerate(self.speech, start=1))
            )
        return " ".join(parts)


def footage_clips(session: Session, footage_id: int) -> list[ClipText]:
    """The footage's clips that have something to tell the builders (`shown_caption` or speech), in clip order."""
    rows = session.scalars(select(Clip).where(Clip.footage_id == footage_id).order_by(Clip.idx)).all()
    clips = {c.id: ClipText(c.id, c.idx, c.start_ts, c.end_ts) for c in rows}
    for caption in session.scalars(select(Caption).where(Caption.footage_id == footage_id)):
        if caption.clip_id in clips:
            clips[caption.clip_id].caption = caption.text.strip()
    segments = session.scalars(
        select(TranscriptSegment)
        .where(TranscriptSegment.footage_id == footage_id)
        .order_by(TranscriptSegment.start_ts, TranscriptSegment.idx)
    )
    for clip_id, lines in clip_speech(segments, rows).items():
        clips[clip_id].speech = lines
    ordered = sorted(clips.values(), key=lambda c: c.idx)
    frames = session.execute(
        select(Keyframe.clip_id, Keyframe.ocr_text)
        .where(Keyframe.clip_id.in_(list(clips)))
        .order_by(Keyframe.clip_id, Keyframe.idx)
    )
    read: dict[int, list[str]] = {}
    for clip_id, text in frames:
        read.setdefault(clip_id, []).append(text or "")
    for clip_id, texts in read.items():
        clips[clip_id].screen = screen_texts(texts)
    return [c for c in ordered if c.shown_caption() or c.speech]  # a clip of guesses alone tells the builders nothing


def halves_of_failed(
    batch: list[ClipText], error: LLMError, what: str, failures: list[LLMError] | None
) -> tuple[list[ClipText], list[ClipText]] | None:
    """After a batch's reply failed for good: its two halves, to try apart; or, for a single clip, None:
    the clip yields no `what`, which is logged and its error added to `failures`."""
    if len(batch) > 1:
        half = len(batch) // 2
        return batch[:half], batch[half:]
    log.warning("no %s for clip %d: %s", what, batch[0].clip_id, error)
    if failures is not None:
        failures.append(error)
    return None


@dataclass
class BatchRun:
    """How a build went: clips in the footage, clips done before and in this run, batches written."""

    clips: int = 0
    skipped: int = 0  # done by an earlier run
    done: int = 0
    batches: int = 0
    seconds: float = 0.0
    stopped: bool = False

    def as_dict(self) -> dict[str, Any]:
        rate = self.done / self.seconds if self.seconds > 0 else 0.0
        return {
            "clips": self.clips,
            "clips_skipped": self.skipped,
            "clips_done": self.done,
            "batches": self.batches,
            "seconds": round(self.seconds, 3),
            "clips_per_s": round(rate, 4),
            "stopped": self.stopped,
        }


def run_batches(
    store: Store,
    footage_id: int,
    builder: str,
    batch_size: int,
    prepare: Callable[[list[ClipText], list[ClipText]], Any],
    write: Callable[[Session, list[ClipText], Any, BuildProgress], None],
    progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    in_flight: int = 1,
) -> BatchRun:
    """Run `prepare(batch, all_clips)` then `write(session, batch, prepared, progress_row)` per batch of
    clips not yet done; the progress mark advances in the same transaction as `write`.

    With `in_flight` > 1 (an LLM server that runs several requests at once) up to that many batches are
    prepared at once on threads, while batches are still written one at a time in footage order: a
    batch that fails stops the run with every batch before it written and none after it, so a resume
    redoes exactly the rest and nothing is stored twice. `prepare` must then be thread-safe."""
    started = time.perf_counter()
    with store.session() as s:
        clips = footage_clips(s, footage_id)
        done_idx = last_done(s, footage_id, builder)
    todo = [c for c in clips if c.idx > done_idx]
    run = BatchRun(clips=len(clips), skipped=len(clips) - len(todo))
    batches = [todo[first : first + batch_size] for first in range(0, len(todo), batch_size)]
    stopping = should_stop or (lambda: False)
    pool = ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix=builder) if in_flight > 1 and len(batches) > 1 else None
    pending: deque[Future] = deque()  # the batches after `position`, in order
    try:
        for position, batch in enumerate(batches):
            if stopping():
                run.stopped = True
                break
            if pool is None:
                prepared = prepare(batch, clips)
            else:
                while len(pending) < in_flight and position + len(pending) < len(batches):
                    pending.append(pool.submit(prepare, batches[position + len(pending)], clips))
                prepared = pending.popleft().result()
            with store.session() as s:
                mark = get_progress(s, footage_id, builder)
                write(s, batch, prepared, mark)
                mark.last_idx, mark.batches, mark.updated_at = batch[-1].idx, mark.batches + 1, time.time()
                s.flush()
                fault_point(f"{builder}:batch{mark.batches}")  # written, not committed: a kill here loses this batch only
            run.done += len(batch)
            run.batches += 1
            if progress is not None:
                progress(Progress(builder, run.skipped + run.done, run.clips, footage_id))
    finally:
        if pool is not None:
            # Batches not started are dropped; those whose requests are out are waited for, so no thread
            # of this run still works (or warns of a failed clip it will not write) once it has returned.
            pool.shutdown(wait=True, cancel_futures=True)
    run.seconds = time.perf_counter() - started
    return run


_EMBEDDING = threading.Lock()


def embed_documents(embedder: TextEmbedder, texts: list[str]):
    """The embedder's vectors for `texts`, one call at a time: batch builders may prepare batches on
    several threads (`run_batches`), and a local embedder's model may not run two calls at once."""
    with _EMBEDDING:
        return embedder.embed_documents(texts)
