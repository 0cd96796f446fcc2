"""Import and indexing: the durable, resumable, cancellable ingest of footage.

`add_paths` registers files quickly (probe, content hash, clip plan, job rows; a bad file gets a clear
per-file error and nothing else changes); any process may do it, while a worker runs. `process` then
runs every unfinished stage in the order `jobs.next_job` gives: each footage's searchable stages, newest
first, then the LLM-built memories. Only the holder of the library's writer lock runs it (`runner.run`),
in a worker process so that cancelling can end the process and a crash in a model cannot take the
caller down.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from egodesk.core.faults import fault_point
from egodesk.core.paths import LibraryPaths
from egodesk.core.settings import Settings
from egodesk.core.stages import PIPELINE_STAGES
from egodesk.core.types import FootageKind, Progress
from egodesk.media.clips import plan_clips
from egodesk.media.errors import MediaError
from egodesk.media.hashing import content_hash
from egodesk.media.probe import MediaInfo, find_media, probe
from egodesk.media.starttime import recording_start
from egodesk.memory.store import Clip, Footage, Store
from egodesk.pipeline import jobs
from egodesk.pipeline.engines import Engines
from egodesk.pipeline.stages import STAGE_FUNCTIONS, Cancelled, StageContext
from egodesk.pipeline.textimport import import_memory_jsonl, import_subtitles

log = logging.getLogger(__name__)

TEXT_SUFFIXES = {".jsonl", ".srt", ".vtt"}
# A photo is a moment: one clip this long at the time it was taken, so that it sits on the timeline and
# in time windows like a moment of video.
PHOTO_SECONDS = 1.0


@dataclass
class AddReport:
    added: list[int] = field(default_factory=list)  # new footage ids
    existing: list[int] = field(default_factory=list)  # already in the library (same content)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    notes: list[str] = field(default_factory=list)  # skipped lines of text tracks and the like


def _discover(paths: Iterable[str | os.PathLike], report: AddReport) -> list[Path]:
    found = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            report.errors.append((str(path), "no such file or folder"))
        elif not os.access(path, os.R_OK):
            report.errors.append((str(path), "permission denied"))
        elif path.is_dir():
            found += find_media([path]) + sorted(p for p in path.rglob("*") if p.suffix.lower() in TEXT_SUFFIXES)
        else:
            found.append(path)
    return found


def add_paths(store: Store, settings: Settings, paths: Iterable[str | os.PathLike], start_ts: float | None = None) -> AddReport:
    report = AddReport()
    for path in _discover(paths, report):
        try:
            if path.suffix.lower() == ".jsonl":
                _add_text(report, import_memory_jsonl(store, path))
            elif path.suffix.lower() in (".srt", ".vtt"):
                start = start_ts if start_ts is not None else path.stat().st_mtime
                _add_text(report, import_subtitles(store, path, start))
            else:
                footage_id, created = add_video(store, settings, path)
                (report.added if created else report.existing).append(footage_id)
        except MediaError as exc:  # a bad video or text track alike
            report.errors.append((str(path), exc.reason))
        except (OSError, UnicodeDecodeError) as exc:
            report.errors.append((str(path), f"cannot read the file ({exc})"))
    return report


def _add_text(report: AddReport, result) -> None:
    report.added += result.new_ids
    report.existing += [i for i in result.footage_ids if i not in result.new_ids]
    report.notes += result.problems


def add_video(store: Store, settings: Settings, path: Path) -> tuple[int, bool]:
    """Register one video, photo or sound recording: probe it (raises MediaError), plan its clips,
    create the jobs of its kind (`jobs.stages_for`)."""
    info = probe(path)
    digest = content_hash(path)
    try:
        return _register(store, settings, path, info, digest)
    except IntegrityError:  # another process registered the same content a moment ago
        with store.session() as session:
            return session.scalar(select(Footage.id).where(Footage.content_hash == digest)), False


def _register(store: Store, settings: Settings, path: Path, info: MediaInfo, digest: str) -> tuple[int, bool]:
    with store.session() as session:
        existing = session.scalar(select(Footage).where(Footage.content_hash == digest))
        if existing is not None:
            if not Path(existing.path).exists():  # moved, or a card mounted elsewhere: the footage follows its file
                existing.path = str(path.resolve())
            return existing.id, False
        start, source = recording_start(path, info)
        duration = info.duration if info.kind != FootageKind.PHOTO else PHOTO_SECONDS
        footage = Footage(
            content_hash=digest,
            path=str(path.resolve()),
            kind=info.kind.value,
            title=path.stem,
            start_ts=start,
            start_source=source,
            duration=duration,
            fps=info.fps,
            width=info.width,
            height=info.height,
            has_audio=info.has_audio,
        )
        session.add(footage)
        session.flush()
        for span in plan_clips(duration, settings.clip_seconds):
            session.add(
                Clip(
                    footage_id=footage.id,
                    idx=span.index,
                    offset=span.offset,
                    start_ts=start + span.offset,
                    end_ts=start + span.offset + span.duration,
                )
            )
        jobs.ensure_jobs(session, footage.id, jobs.stages_for(info.kind), done=("probe",))
        session.flush()
        fault_point("probe:commit")  # registered but not committed: a kill here must leave no trace
        return footage.id, True


def process(
    store: Store,
    paths: LibraryPaths,
    settings: Settings,
    progress: Callable[[Progress], None] = lambda p: None,
    should_stop: Callable[[], bool] = lambda: False,
    retry_failed: bool = False,
) -> dict[str, int]:
    """Run every unfinished stage until none is left or a stop is asked. Returns counts by outcome.
    Call it through `runner.run`, which holds the library's writer lock."""
    from egodesk.pipeline.faces import FACE_STAGE_FUNCTIONS
    from egodesk.pipeline.memory_stages import MEMORY_STAGE_FUNCTIONS
    from egodesk.pipeline.reembed import run_reembed
    from egodesk.pipeline.speakers import SPEAKER_STAGE_FUNCTIONS, refresh_stale

    functions = {**STAGE_FUNCTIONS, **SPEAKER_STAGE_FUNCTIONS, **FACE_STAGE_FUNCTIONS, **MEMORY_STAGE_FUNCTIONS}
    engines = Engines(settings, paths, store)
    outcome = {"done": 0, "failed": 0, "cancelled": 0}
    retried: set[tuple[int, str]] = set()
    while not should_stop():
        job = jobs.next_job(store, PIPELINE_STAGES, retry_failed=retry_failed)
        if job is None or job in retried:
            break
        footage_id, stage = job
        if retry_failed:
            retried.add(job)
        jobs.set_state(store, footage_id, stage, "running")
        progress(Progress(stage, 0, 0, footage_id, "started"))
        try:
            functions[stage](StageContext(store, engines, footage_id, progress, should_stop))
            outcome["done"] += 1
            progress(Progress(stage, 1, 1, footage_id, "done"))
        except Cancelled:
            jobs.set_state(store, footage_id, stage, "cancelled")
            outcome["cancelled"] += 1
            break
        except Exception as exc:  # one footage's failure must not stop the others
            log.exception("footage %s: stage %s failed", footage_id, stage)
            jobs.set_state(store, footage_id, stage, "failed", error=jobs.failure_text(exc))
            outcome["failed"] += 1
            progress(Progress(stage, 0, 0, footage_id, f"failed: {jobs.failure_text(exc)}"))
            if jobs.storage_problem(exc):
                break  # a full disk or a locked database would fail every next stage the same way
    if not should_stop():
        refresh_stale(store, engines, progress, should_stop)  # names changed: the memories showing them
    if not should_stop():
        run_reembed(engines, progress, should_stop)  # another embedder chosen: after the stages
    return outcome
