"""The application façade: one object per open library, used by the CLI and the GUI alike.

It answers read queries with plain dataclasses (no SQLAlchemy objects escape) and runs long work
through the pipeline. The GUI calls it from its task runner, never touching SQL or models itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update

from egodesk.core.paths import LibraryPaths
from egodesk.core.settings import Settings
from egodesk.core.stages import rank as stage_rank
from egodesk.core.types import Progress
from egodesk.media.export import ExportReport, export_range
from egodesk.memory import corrections, keep, queries
from egodesk.memory.corrections import CorrectedLine
from egodesk.memory.faces import FaceInfo
from egodesk.memory.keep import KeepError, KeptMoment
from egodesk.memory.people import SaidLine, VoiceInfo
from egodesk.memory.queries import ClipInfo, FootageInfo, MemoryView
from egodesk.memory.speech import lines_between
from egodesk.memory.store import Footage, Job, Store
from egodesk.pipeline import faces as face_stage
from egodesk.pipeline import speakers
from egodesk.pipeline.asking import question_in_flight
from egodesk.pipeline.engines import Engines
from egodesk.pipeline.ingest import AddReport, add_paths
from egodesk.pipeline.jobs import stage_states
from egodesk.pipeline.runner import run, worker_lock
from egodesk.retrieval.search import SearchResult, TextSearch

if TYPE_CHECKING:
    from egodesk.core.types import Answer
    from egodesk.pipeline.ask import Asker
    from egodesk.retrieval.base import Memory


@dataclass
class ImportReport:
    added: list[int]
    existing: list[int]
    errors: list[tuple[str, str]]
    notes: list[str]
    outcome: dict[str, int]


class Library:
    def __init__(self, root: str | os.PathLike | LibraryPaths | None = None):
        """Open the library in the folder `root` (or with those `LibraryPaths`), else the default one."""
        if isinstance(root, LibraryPaths):
            paths = root
        else:
            paths = LibraryPaths.at(root) if root else LibraryPaths.default()
        self.paths = paths.ensure()
        self.settings = Settings.load(self.paths.settings_file)
        self.store = Store(self.paths.database)
        self._face_pictures: dict = {}  # face_pictures' cache, by sighting: in memory only

    @cached_property
    def engines(self) -> Engines:
        """The models and indices, loaded lazily once, shared with the pipeline's stages."""
        return Engines(self.settings, self.paths, self.store)

    @property
    def index_manager(self):
        return self.engines.index_manager

    def save_settings(self, settings: Settings) -> None:
        settings.save(self.paths.settings_file)
        self.settings = settings

    def close(self) -> None:
        self.store.close()

    # --- importing and indexing -------------------------------------------------------------
    def add(self, paths: Iterable[str | os.PathLike], start_ts: float | None = None) -> AddReport:
        return add_paths(self.store, self.settings, paths, start_ts)

    def import_paths(
        self,
        paths: Iterable[str | os.PathLike],
        progress: Callable[[Progress], None] = lambda p: None,
        should_stop: Callable[[], bool] = lambda: False,
    ) -> ImportReport:
        """Register files and folders, then index everything unfinished (run it in a worker process)."""
        added = self.add(paths)
        outcome = self.process(progress, should_stop)
        return ImportReport(added.added, added.existing, added.errors, added.notes, outcome)

    def process(
        self,
        progress: Callable[[Progress], None] = lambda p: None,
        should_stop: Callable[[], bool] = lambda: False,
        retry_failed: bool = False,
    ) -> dict[str, int]:
        """Index every unfinished stage in this process, as the library's one writer or attached to the
        worker already running (`runner.run`; the app's import task calls this)."""
        return run(self.store, self.paths, self.settings, progress, should_stop, retry_failed)

    def mark_cancelled(self) -> int:
        """After a worker was ended: its jobs left 'running' become 'cancelled' (resumable). Only when
        no worker holds the library's lock: the running jobs of a live one are its own, not ours."""
        with worker_lock(self.paths) as mine:
            if not mine:
                return 0
            with self.store.session() as session:
                result = session.execute(update(Job).where(Job.state == "running").values(state="cancelled"))
                return result.rowcount or 0

    def resume(self) -> int:
        """Cancelled and failed jobs go back to pending. Returns how many."""
        with self.store.session() as session:
            result = session.execute(update(Job).where(Job.state.in_(("cancelled", "failed"))).values(state="pending", error=""))
            return result.rowcount or 0

    # --- reading ------------------------------------------------------------------------------
    def footage(self) -> list[FootageInfo]:
        return queries.footage(self.store)

    def clips(self, footage_id: int, clip_id: int | None = None) -> list[ClipInfo]:
        """A footage's clips with what ingest found in each (just one clip when `clip_id` is given)."""
        return queries.clips(self.store, footage_id, clip_id)

    def find_footage(self, ref: str) -> int | None:
        """A footage id from an id, a title or a path."""
        with self.store.session() as session:
            if ref.isdigit() and session.get(Footage, int(ref)):
                return int(ref)
            return session.scalar(
                select(Footage.id).where(
                    (Footage.title == ref) | (Footage.path == ref) | (Footage.path == str(Path(ref).resolve()))
                )
            )

    def job_rows(self) -> list[dict]:
        with self.store.session() as session:
            rows = session.execute(select(Job, Footage.title).join(Footage).order_by(Job.footage_id, Job.id)).all()
        out = [
            {
                "footage_id": j.footage_id,
                "footage": title,
                "stage": j.stage,
                "state": j.state,
                "done": j.done,
                "total": j.total,
                "attempts": j.attempts,
                "error": j.error,
            }
            for j, title in rows
        ]
        return sorted(out, key=lambda r: (r["footage_id"], stage_rank(r["stage"])))

    # --- search -------------------------------------------------------------------------------
    @cached_property
    def _text_search(self) -> TextSearch:
        """Kept for the vocabulary it reads once and refreshes as imports add words."""
        return TextSearch(self.store, known=lambda: self.settings.vocabulary)

    def search(self, text: str, limit: int = 200) -> SearchResult:
        """Words and phrases in everything said, shown, tagged, described and remembered
        (`retrieval.search`: quoted phrases exact, other words also heard alike), grouped by footage and
        time, each hit with its matching words marked; footage still indexing shows what it holds so far."""
        return self._text_search.search(text, limit)

    # --- kept moments: stars, notes, exports ------------------------------------------------------
    def star(self, footage_id: int, start: float, end: float) -> int:
        """Star a moment (wall-clock span of a footage); its star id (`memory.keep` says the rules)."""
        return keep.star(self.store, footage_id, start, end)

    def unstar(self, star_id: int) -> None:
        keep.unstar(self.store, star_id)

    def kept(self, kinds: tuple[str, ...] = ("star", "note"), footage_id: int | None = None) -> list[KeptMoment]:
        """The starred moments and the notes, in time order."""
        return keep.kept(self.store, kinds, footage_id)

    def add_note(self, footage_id: int, start: float, end: float, text: str) -> int:
        """Write a note on a moment; it is searchable at once and evidence for questions (`_memory_changed`)."""
        note_id = keep.add_note(self.store, footage_id, start, end, text)
        self._memory_changed(footage_id)
        return note_id

    def edit_note(self, note_id: int, text: str) -> None:
        self._memory_changed(keep.edit_note(self.store, note_id, text))

    def delete_note(self, note_id: int) -> None:
        self._memory_changed(keep.delete_note(self.store, note_id))

    def _memory_changed(self, footage_id: int, line: tuple[float, float] | None = None) -> None:
        """Bring the footage's memory up to date with a note or a corrected `line` (its span), so questions
        find it as evidence of its moment: a corrected line's clip is described again (`stages.recaption`:
        a caption quotes what was said and read), then only the parents whose text changed (that note, that
        clip's transcript and caption) are embedded again (`unitsync`), so it takes a moment. A footage
        whose stages have not run yet reads them when they run. The person's row is already committed, so
        a failure here loses nothing: the next build of that memory adds it."""
        from egodesk.memory.parent_child import build_parent_child
        from egodesk.pipeline.stages import recaption

        with self.store.session() as session:
            states = stage_states(session, footage_id)
        if line is not None and states.get("captions") == "done":
            recaption(self.store, self.engines, footage_id, *line)
        if states.get("memory-parent") in ("done", "running"):
            build_parent_child(self.store, self.engines.index_manager, self.engines.embedder, footage_id, self.settings)
            if "memory" in self.__dict__:  # this library's retrieval caches: its next question reads the change
                self.memory.units_changed()

    # --- corrections: what was misheard or misread ---------------------------------------------
    def correct_line(
        self, footage_id: int, at: float, text: str, kind: str = corrections.SPEECH, llm_memories: bool = True
    ) -> CorrectedLine:
        """Put the person's text in place of the transcript line (kind "speech") or on-screen text
        ("screen") at the moment `at` (wall clock) of a footage. It is kept over every later run of the
        stage that wrote the line (`memory.corrections` says the rules), searchable at once (FTS triggers),
        and that moment's parent-child memory is rebuilt (`_memory_changed`), then, unless `llm_memories`
        is False (a caller that runs `rebuild_llm_memories` itself once it has told the person), its
        records and atomic statements. Raises `CorrectionError` (a ValueError) with the reason, changing
        nothing."""
        line = corrections.correct(self.store, footage_id, at, text, kind)
        self._memory_changed(footage_id, (line.start, line.end))
        if llm_memories:
            self.rebuild_llm_memories(line)
        return line

    def undo_correction(
        self, footage_id: int, at: float, kind: str = corrections.SPEECH, llm_memories: bool = True
    ) -> CorrectedLine:
        """Take back the latest correction of the line at `at`; the line as it is now (memories as for
        `correct_line`)."""
        line = corrections.undo(self.store, footage_id, at, kind)
        self._memory_changed(footage_id, (line.start, line.end))
        if llm_memories:
            self.rebuild_llm_memories(line)
        return line

    def rebuild_llm_memories(self, line: CorrectedLine) -> dict[str, dict]:
        """Write the LLM-built memories (interaction records, atomic statements) of a corrected line's
        clips again with the library's LLM and embedder, in place of theirs; the rest of the footage's
        stay (`record_compression.rebuild_clips`, `atomic.rebuild_clips`). It runs after the line is
        searchable and in the parent-child memory, since the LLM takes seconds a clip. Only a builder
        switched on whose stage is done for the footage: one still to run reads the corrected line
        itself, and one running holds its own state of the footage. A failure of the LLM is logged and
        leaves that builder's memories as they were (the correction is saved). What each builder did, by
        stage."""
        import logging

        from egodesk.core.timeutil import clock
        from egodesk.memory import atomic, record_compression
        from egodesk.perception.llm import LLMError

        clips = corrections.clips_of(self.store, line.footage_id, line.start, line.end)
        with self.store.session() as session:
            states = stage_states(session, line.footage_id)
        builders = (
            ("memory-records", self.settings.memory_records, record_compression.rebuild_clips),
            ("memory-atomic", self.settings.memory_atomic, atomic.rebuild_clips),
        )
        done: dict[str, dict] = {}
        for stage, enabled, rebuild in builders:
            if enabled and clips and states.get(stage) == "done":
                e = self.engines
                try:
                    done[stage] = rebuild(self.store, e.index_manager, e.embedder, e.llm, line.footage_id, clips, self.settings)
                except LLMError as exc:  # the correction is saved; these memories keep the words first heard
                    logging.getLogger(__name__).warning("%s at %s kept as first heard: %s", stage, clock(line.start), exc)
                    done[stage] = {"changed": False, "error": str(exc)}
        if any(report["changed"] for report in done.values()) and "memory" in self.__dict__:
            self.memory.units_changed()
        return done

    def corrections(self, footage_id: int | None = None) -> list[CorrectedLine]:
        """The corrections in force (of one footage, or all), in time order."""
        return corrections.corrections(self.store, footage_id)

    def export(self, footage_id: int, start: float, end: float, out: str | os.PathLike, overwrite: bool = False) -> ExportReport:
        """Write a moment (wall-clock span) of a video footage to an MP4 file with its transcript as
        subtitles (`media.export`: stream copy when the cut starts on a keyframe). Raises ValueError
        (`KeepError`, `MediaError`) with the reason; the library is only read."""
        with self.store.session() as session:
            footage = session.get(Footage, footage_id)
            if footage is None:
                raise KeepError(f"there is no footage {footage_id} in this library")
            if footage.kind != "video":
                raise KeepError(f"“{footage.title}” is text only (imported captions or transcripts): there is no video")
            keep.check_span(footage, start, end)
            origin, path = footage.start_ts, footage.path
            lines = [(a - origin, b - origin, line) for a, b, line in lines_between(session, footage_id, start, end)]
        return export_range(path, start - origin, min(end, footage.end_ts) - origin, out, lines, overwrite)

    # --- people: who said it (`pipeline.speakers`, `memory.people`) -----------------------------
    def voices(self) -> list[VoiceInfo]:
        """Every voice heard, the wearer's ("me") first, each with its footage count and speech seconds."""
        return speakers.list_voices(self.store)

    def voice_samples(self, per_voice: int = 3) -> dict[int, list[tuple[int, float, float]]]:
        """Each voice's longest turns (footage id, wall-clock start, end): what to listen to before naming it."""
        return speakers.voice_samples(self.store, per_voice)

    # A change below writes the new names into the lines and returns; the captions and memories that
    # showed the old ones follow in `refresh_memories` (the window and the CLI run it next; so does every
    # run of the stages).
    def name_voice(self, voice_id: int, name: str) -> VoiceInfo:
        """Name a voice; its lines say the name from now on, their captions and memories once refreshed."""
        return self._voices_changed(speakers.name_voice(self.store, voice_id, name))

    def claim_voice(self, voice_id: int) -> VoiceInfo:
        """The person says this voice is theirs: its lines say "me" from now on (`people.claim`)."""
        return self._voices_changed(speakers.claim_voice(self.store, voice_id))

    def merge_voices(self, into: int, other: int) -> VoiceInfo:
        """Make voice `other` part of voice `into` (one person heard as two)."""
        return self._voices_changed(speakers.merge_voices(self.store, into, other))

    def split_voice(self, voice_id: int, footage_id: int) -> VoiceInfo:
        """What voice `voice_id` was heard as in footage `footage_id` is someone else: a new voice, to name."""
        return self._voices_changed(speakers.split_voice(self.store, voice_id, footage_id))

    def set_line_voice(self, line_id: int, voice_id: int | None) -> SaidLine:
        """The person says who said transcript line `line_id` (its id in `clips`' `line_ids`): voice
        `voice_id`, or None for someone else (the line then names nobody). Kept as theirs through reruns,
        resumes and re-imports (`people.set_line_voice`); that moment's caption and memory once refreshed."""
        return self._voices_changed(speakers.set_line_voice(self.store, line_id, voice_id))

    def forget_voice(self, voice_id: int) -> int:
        """Delete a person's voice print and name from the library (`speakers.forget_person`); their words
        stay as unnamed speech. The number of lines that lost their speaker."""
        return self._voices_changed(speakers.forget_person(self.store, self.engines, voice_id))

    # --- faces: who was there (`pipeline.faces`, `memory.faces`) -------------------------------
    def faces(self) -> list[FaceInfo]:
        """Every face seen, the most seen first, each with its footage and sighting counts and best sighting."""
        return face_stage.list_faces(self.store)

    def face_pictures(self, side: int = 96, limit: int = 60) -> dict[int, bytes]:
        """A small square JPEG of each of the `limit` most seen faces (its best sighting), read from the
        footage; kept nowhere."""
        return face_stage.face_pictures(self.store, side, limit, self._face_pictures)

    def name_face(self, face_id: int, name: str) -> FaceInfo:
        """Name a face (the rules of a voice's name); the captions where it was seen say so."""
        return self._voices_changed(face_stage.name_face(self.store, face_id, name))

    def merge_faces(self, into: int, other: int) -> FaceInfo:
        """Make face `other` part of face `into` (one person seen as two)."""
        return self._voices_changed(face_stage.merge_faces(self.store, into, other))

    def forget_face(self, face_id: int) -> int:
        """Delete a person's face print and name from the library (`pipeline.faces.forget_face`); the sightings stay
        as someone seen. The number of sightings that lost their face."""
        self._face_pictures.clear()  # no picture of a forgotten face is kept, in memory either
        return self._voices_changed(face_stage.forget_face(self.store, self.engines, face_id))

    def refresh_memories(
        self, progress: Callable[[Progress], None] = lambda p: None, should_stop: Callable[[], bool] = lambda: False
    ) -> int:
        """Describe and embed again the moments whose captions and memories still show an old name
        (`speakers.refresh_stale`); how many moments."""
        return self._voices_changed(speakers.refresh_stale(self.store, self.engines, progress, should_stop))

    def _voices_changed(self, result):
        if "memory" in self.__dict__:  # this library's retrieval caches: its next question reads the change
            self.memory.units_changed()
        return result

    # --- memory -------------------------------------------------------------------------------
    def forget(self, footage_id: int, start: float | None = None, end: float | None = None):
        """Remove a footage, or the part of it overlapping [start, end], from SQLite, every index and
        the thumbnail cache ("forget this")."""
        from egodesk.memory.forget import forget

        whole = start is None and end is None  # a range may need its records recompressed: that embeds
        return forget(
            self.store,
            self.index_manager,
            self.paths,
            footage_id,
            start,
            end,
            embedder=None if whole else self.engines.embedder,
            settings=self.settings,
        )

    def memory_stats(self) -> list[dict]:
        from egodesk.memory.stats import memory_stats

        return memory_stats(self.store, self.paths.indices)

    def memory_at(self, footage_id: int, offset: float) -> MemoryView | None:
        """The clip of `footage_id` that contains `offset` seconds into the file, with its memories."""
        return queries.memory_at(self.store, footage_id, offset)

    # --- questions ----------------------------------------------------------------------------
    def follow_reembedding(self) -> None:
        """The worker (another process) finished re-embedding the library with another embedder: this
        side's embedder and indices are the old ones, so load them again before the next question."""
        if "engines" in self.__dict__ and self.engines.embedder_stale():
            for kept in ("engines", "memory"):
                self.__dict__.pop(kept, None)

    @cached_property
    def memory(self) -> Memory:
        """Retrieval's view of the library, kept between questions for its caches."""
        from egodesk.retrieval.base import Memory

        e = self.engines
        return Memory(self.store, e.index_manager, e.embedder, llm=e.llm, settings=self.settings)

    @cached_property
    def asker(self) -> Asker:
        """The ask path over this library (`pipeline.ask.Asker`), kept for its memo of when each question
        was asked; it opens the library's memory and model at each question (`_ask_engines`)."""
        from egodesk.pipeline.ask import Asker

        return Asker(self._ask_engines, lambda: self.settings, lambda: question_in_flight(self.paths))

    def _ask_engines(self) -> tuple[Memory, Any]:
        """The memory and LLM to answer with, as they are now (`follow_reembedding`)."""
        self.follow_reembedding()
        return self.memory, self.engines.llm

    def prepare_to_answer(
        self, draft: str = "", options: list[str] | None = None, should_stop=None, asked_at: float | None = None
    ) -> None:
        """Load the LLM and evaluate its answer rules now, while the user types, not at the question; given
        the question typed so far, read the prompt that would answer it (`Asker.prepare`)."""
        self.asker.prepare(draft, options, should_stop, asked_at)

    def ask(
        self,
        question: str,
        options: list[str] | None = None,
        asked_at: float | None = None,
        strategy: str | None = None,
        k: int | None = None,
        sources: list[int] | None = None,
        on_evidence=None,
        on_text=None,
    ) -> Answer:
        """Answer a question from the library's memories (`Asker.ask`: at the time it was typed or asked
        a moment ago, else now); the ingest worker holds its LLM memory stages meanwhile. Evidence
        carries offsets into its footage file so a player can seek to it."""
        return self.asker.ask(question, options, asked_at, strategy, k, sources, on_evidence, on_text)
