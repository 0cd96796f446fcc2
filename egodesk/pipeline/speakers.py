"""Who said it, in the pipeline: the `speakers` ingest stage, and the library-wide changes a person makes
to voices (name, merge, forget, who said one line) with the memories that show a line's speaker brought up to date.

The stage runs after `asr`: it diarizes the footage's soundtrack (the WAV the audio stage extracted,
which it deletes once done; extracted again for a footage transcribed before this stage existed) with
the voice encoder of the manifest (`perception.diarize`), stores the turns and matches the clusters
to the library's voices (`memory.people.store_footage`), in one transaction with its job's "done"
mark. A rerun replaces that footage's turns and appearances. Each run ends by regrouping the library's
voices (`people.regroup`), so they do not depend on the order the footage were indexed; the lines of
other footage whose voices changed are brought up to date with this one's. A footage without sound or
speech is done with no turns.

What shows a line's speaker: the line itself (`speaker`, read by exports and the window), the clip's
caption (it quotes what was said there), and the parent-child memory built from both. When labels
change (a voice named, merged or forgotten, or another voice found to be the wearer's) the lines say the
new names at once, and only the moments whose lines changed are brought up to date, as a correction is
(`refresh_memory`: those clips described again, then only the changed parents embedded again by
`unitsync`). A person's change marks those moments (`memory.stale`) and returns: describing and
embedding them costs seconds a moment, minutes for a voice heard across a large library, so
`refresh_stale` does it after (the window's next task, the CLI after it answered, and every run of the
stages); a forget does it at once, as nothing of a forgotten person may stay. The LLM-built memories
(records, atomic statements) are not rebuilt for a rename; forgetting a voice removes its name from them
(`forget_person`).
"""

from __future__ import annotations

import logging
import re
import shutil
import wave
from collections.abc import Callable
from pathlib import Path

import numpy as np
from sqlalchemy import select, text

from egodesk.core.types import Progress
from egodesk.media.audio import extract_audio
from egodesk.memory import people, stale
from egodesk.memory.people import SaidLine, Spans, VoiceInfo
from egodesk.memory.schema import Unit, Vector, Voice
from egodesk.memory.store import Store
from egodesk.perception.diarize import SAMPLE_RATE, Diarization
from egodesk.pipeline.engines import Engines
from egodesk.pipeline.jobs import finish, stage_states
from egodesk.pipeline.stages import StageContext, recaption

log = logging.getLogger(__name__)

STAGE = "speakers"
SOMEONE = "someone"  # what a forgotten person's name becomes in memories an LLM wrote
REBUILT_SPACES = ("caption", "transcript", "subchunk")  # the parent-child spaces whose units showed the name


def read_wav(path: Path) -> np.ndarray:
    """The samples of a 16 kHz mono 16-bit WAV (what `extract_audio` writes) as float32 in [-1, 1]."""
    with wave.open(str(path), "rb") as wav:
        if wav.getframerate() != SAMPLE_RATE or wav.getnchannels() != 1 or wav.getsampwidth() != 2:
            raise ValueError(f"{path}: not 16 kHz mono 16-bit audio")
        data = wav.readframes(wav.getnframes())
    return np.frombuffer(data, np.int16).astype(np.float32) / 32768.0


def run_speakers(ctx: StageContext) -> None:
    footage = ctx.footage()
    ctx.report(STAGE, 0, 1)
    diarization = Diarization([], [])
    wav = ctx.audio_path
    if footage.has_audio and not wav.exists() and Path(footage.path).is_file():
        extract_audio(footage.path, wav)  # transcribed before this stage existed: its WAV was deleted
    if footage.has_audio and wav.exists():
        samples = read_wav(wav)
        if len(samples):
            diarization = ctx.engines.diarizer.diarize(samples)
    with ctx.store.session() as session:
        turns = people.store_footage(session, ctx.footage_id, diarization)
        changed = people.relabel(session)
        finish(session, ctx.footage_id, STAGE, turns)
    if wav.exists():
        wav.unlink()  # the transcript and the turns are stored; the WAV was only their input
    refresh_memory(ctx.store, ctx.engines, changed)


SPEAKER_STAGE_FUNCTIONS = {STAGE: run_speakers}


def _runs(spans: list[tuple[float, float]], gap: float = 1.0) -> list[tuple[float, float]]:
    """Spans joined where they overlap or lie within `gap` seconds of each other."""
    out: list[tuple[float, float]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1] + gap:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def refresh_memory(store: Store, engines: Engines, changed: Spans) -> None:
    """Bring what shows the changed lines' speakers up to date: their clips' captions (once the captions
    stage has run; before, it reads the new labels itself) and the footage's parent-child memory (only
    the changed parents are embedded again)."""
    from egodesk.memory.parent_child import build_parent_child

    for footage_id, spans in changed.items():
        with store.session() as session:
            states = stage_states(session, footage_id)
        if states.get("captions") == "done":
            for start, end in _runs(spans):
                recaption(store, engines, footage_id, start, end)
        if states.get("memory-parent") == "done":
            build_parent_child(store, engines.index_manager, engines.embedder, footage_id, engines.settings)


def list_voices(store: Store) -> list[VoiceInfo]:
    with store.session() as session:
        return people.voices(session)


def voice_samples(store: Store, per_voice: int = 3) -> dict[int, list[tuple[int, float, float]]]:
    with store.session() as session:
        return people.samples(session, per_voice)


def name_voice(store: Store, voice_id: int, name: str) -> VoiceInfo:
    with store.session() as session:
        stale.mark(session, people.rename(session, voice_id, name))
    return _info(store, voice_id)


def claim_voice(store: Store, voice_id: int) -> VoiceInfo:
    with store.session() as session:
        stale.mark(session, people.claim(session, voice_id))
    return _info(store, voice_id)


def merge_voices(store: Store, into: int, other: int) -> VoiceInfo:
    with store.session() as session:
        stale.mark(session, people.merge(session, into, other))
    return _info(store, into)


def split_voice(store: Store, voice_id: int, footage_id: int) -> VoiceInfo:
    with store.session() as session:
        new, changed = people.split(session, voice_id, footage_id)
        stale.mark(session, changed)
    return _info(store, new)


def set_line_voice(store: Store, segment_id: int, voice_id: int | None) -> SaidLine:
    """A person says who said one line (`people.set_line_voice`; None: someone else); that moment is marked
    for `refresh_stale` when its label changed."""
    with store.session() as session:
        line, changed = people.set_line_voice(session, segment_id, voice_id)
        stale.mark(session, changed)
    return line


def refresh_stale(
    store: Store,
    engines: Engines,
    progress: Callable[[Progress], None] = lambda p: None,
    should_stop: Callable[[], bool] = lambda: False,
) -> int:
    """Bring every moment marked stale (`memory.stale`) up to date, footage by footage (`refresh_memory`),
    each footage's marks deleted once its memories are written; a stop leaves the rest marked. Returns
    how many moments were refreshed."""
    with store.session() as session:
        marked = stale.pending(session)
    done = 0
    for number, (footage_id, (ids, moments)) in enumerate(marked.items(), start=1):
        if should_stop():
            break
        progress(Progress("names", number - 1, len(marked), footage_id, "memories showing the new names"))
        refresh_memory(store, engines, {footage_id: moments})
        with store.session() as session:
            stale.clear(session, ids)
        done += len(ids)
    if marked:
        progress(Progress("names", len(marked), len(marked)))
    return done


def _info(store: Store, voice_id: int) -> VoiceInfo:
    return next(v for v in list_voices(store) if v.id == voice_id)


def forget_person(store: Store, engines: Engines, voice_id: int) -> int:
    """Delete a voice's print and name from the library: its rows, the lines' labels and the memories
    showing them (`refresh_memory`), its name in memories an LLM wrote (`SOMEONE` in its place, those
    units embedded again), the vectors of the units replaced (their indices rebuilt from SQLite), the saved
    lexical indices (caches that hold the old words), and the freed pages of the database and its WAL
    (`purge_freed`). Its words stay, unattributed. Returns how many lines lost their speaker."""
    with store.session() as session:
        voice = session.get(Voice, voice_id)
        name = voice.name if voice is not None else None
        changed = people.forget_voice(session, voice_id)
    forget_everywhere(store, engines, name, changed)
    return sum(len(spans) for spans in changed.values())


def forget_everywhere(store: Store, engines: Engines, name: str | None, changed: Spans) -> None:
    """After a person's rows are deleted (a voice's or a face's): the memories that showed them rebuilt
    (`refresh_memory` over `changed`), their `name` replaced by SOMEONE in memories an LLM wrote, the
    parent-child indices rebuilt from SQLite (a deleted label keeps its vector in the file until then), the
    saved lexical indices deleted, and the freed pages purged (`purge_freed`), so no file keeps them."""
    refresh_memory(store, engines, changed)
    rebuilt = set(REBUILT_SPACES) & set(engines.index_manager.spaces())
    if name:
        rebuilt |= _scrub_name(store, engines, name)
    for space in sorted(rebuilt):
        engines.index_manager.rebuild(space)
    shutil.rmtree(engines.index_manager.lexical_dir, ignore_errors=True)
    purge_freed(store)


def _scrub_name(store: Store, engines: Engines, name: str) -> set[str]:
    """Put SOMEONE in place of `name` (whole words, any case) in every memory unit's text not rebuilt from
    the lines (those an LLM wrote), and embed the changed units again in the spaces that hold them; those
    spaces."""
    pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE)
    with store.session() as session:
        units = [u for u in session.scalars(select(Unit).where(Unit.text.icontains(name))) if pattern.search(u.text)]
        for unit in units:
            unit.text = pattern.sub(SOMEONE, unit.text)
            if unit.meta and name.lower() in str(unit.meta).lower():
                unit.meta = _scrubbed(unit.meta, pattern)
        session.flush()
        spaces: dict[str, list[Unit]] = {}
        for unit in units:
            for space in session.scalars(select(Vector.space).where(Vector.unit_id == unit.id)):
                spaces.setdefault(space, []).append(unit)
        for space, held in spaces.items():
            matrix = engines.embedder.embed_documents([u.text for u in held])
            engines.index_manager.add(space, [u.id for u in held], matrix, engines.embedder.model_id, session=session)
    engines.index_manager.save()
    return set(spaces)


def _scrubbed(value, pattern: re.Pattern):
    if isinstance(value, str):
        return pattern.sub(SOMEONE, value)
    if isinstance(value, list):
        return [_scrubbed(v, pattern) for v in value]
    if isinstance(value, dict):
        return {k: _scrubbed(v, pattern) for k, v in value.items()}
    return value


def purge_freed(store: Store) -> bool:
    """Leave no deleted bytes behind: the search index's segments merged (an FTS5 update keeps the old
    words in older segments until then), the WAL checkpointed and emptied, the database rewritten
    (VACUUM), and the WAL emptied again. False when another connection's open read kept the WAL from
    being emptied (its frames are overwritten as the library is written; the next purge empties it)."""
    from egodesk.memory.textsearch import TABLE

    with store.session() as session:
        session.execute(text(f"INSERT INTO {TABLE}({TABLE}) VALUES('optimize')"))
    with store.engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.exec_driver_sql("VACUUM")
        busy = conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").scalar()
    if busy:
        log.info("the WAL could not be emptied: another connection was reading")
    return not busy
