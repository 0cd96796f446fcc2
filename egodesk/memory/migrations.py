"""Schema versions. The database's `PRAGMA user_version` says which migrations have run; each one runs
in its own transaction, so an interrupted upgrade resumes cleanly. Version 1 creates every table of
`schema` and `record_tables`; version 2 adds the record tables to a database made before they existed (on a
new one it finds them there and does nothing); version 3 adds the search-as-you-type index
(`textsearch`) and fills it from what is stored; version 4 adds the kept moments (`keep`: stars and notes)
and the notes' rows in that index; version 5 adds the person's corrections of misheard lines (`corrections`);
version 6 adds the voices and speech turns (`people`), a transcript line's voice, and a pending `speakers`
job for each footage transcribed before it, so `egodesk resume` finds who spoke there; version 7 adds
whether a person said a voice is theirs (`voice.wearer_said`); version 8 adds the faces seen (`faces`)
and a pending `faces` job for each footage that has keyframes, so `egodesk resume` finds who was there;
version 9 adds who a person said spoke a line (`line_voice`); version 10 the moments whose memories still
show an old name (`stale_moment`); version 11 whether a person merged or split a voice (`voice.kept`)."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

from egodesk.memory import record_tables, textsearch
from egodesk.memory.schema import (
    Base,
    Correction,
    Face,
    FaceSighting,
    LineVoice,
    Note,
    SpeechTurn,
    StaleMoment,
    Star,
    Voice,
    VoiceAppearance,
)


def _v1_create(conn: Connection) -> None:
    Base.metadata.create_all(conn)


def _v4_kept_moments(conn: Connection) -> None:
    """The star and note tables (a new library has them from version 1), and the notes in the search index."""
    Base.metadata.create_all(conn, tables=[Base.metadata.tables[t.__tablename__] for t in (Star, Note)], checkfirst=True)
    textsearch.index_notes(conn)


def _v5_corrections(conn: Connection) -> None:
    """The corrections table (a new library has it from version 1)."""
    Base.metadata.create_all(conn, tables=[Base.metadata.tables[Correction.__tablename__]], checkfirst=True)


def _v6_people(conn: Connection) -> None:
    """The voice tables and the transcript line's voice (a new library has them from version 1); a pending
    speakers job for every footage that has an ASR job and no speakers job yet."""
    tables = [Base.metadata.tables[t.__tablename__] for t in (Voice, VoiceAppearance, SpeechTurn)]
    Base.metadata.create_all(conn, tables=tables, checkfirst=True)
    columns = {row[1] for row in conn.execute(text("PRAGMA table_info(transcript_segment)"))}
    if "voice_id" not in columns:
        conn.execute(text("ALTER TABLE transcript_segment ADD COLUMN voice_id INTEGER REFERENCES voice(id) ON DELETE SET NULL"))
        conn.execute(text("CREATE INDEX ix_transcript_segment_voice_id ON transcript_segment (voice_id)"))
    conn.execute(
        text(
            "INSERT INTO job (footage_id, stage, state, done, total, error, attempts, updated_at) "
            "SELECT footage_id, 'speakers', 'pending', 0, 0, '', 0, CAST(strftime('%s', 'now') AS REAL) FROM job AS a WHERE a.stage = 'asr' "
            "AND NOT EXISTS (SELECT 1 FROM job AS b WHERE b.footage_id = a.footage_id AND b.stage = 'speakers')"
        )
    )


def _v7_wearer_said(conn: Connection) -> None:
    """The voice's `wearer_said` (a new library has it from version 1)."""
    columns = {row[1] for row in conn.execute(text("PRAGMA table_info(voice)"))}
    if "wearer_said" not in columns:
        conn.execute(text("ALTER TABLE voice ADD COLUMN wearer_said BOOLEAN NOT NULL DEFAULT 0"))


def _v8_faces(conn: Connection) -> None:
    """The face tables (a new library has them from version 1); a pending faces job for every footage
    that has a keyframes job and no faces job yet (a sound recording has neither)."""
    tables = [Base.metadata.tables[t.__tablename__] for t in (Face, FaceSighting)]
    Base.metadata.create_all(conn, tables=tables, checkfirst=True)
    conn.execute(
        text(
            "INSERT INTO job (footage_id, stage, state, done, total, error, attempts, updated_at) "
            "SELECT footage_id, 'faces', 'pending', 0, 0, '', 0, CAST(strftime('%s', 'now') AS REAL) FROM job AS a "
            "WHERE a.stage = 'keyframes' "
            "AND NOT EXISTS (SELECT 1 FROM job AS b WHERE b.footage_id = a.footage_id AND b.stage = 'faces')"
        )
    )


def _v9_line_voices(conn: Connection) -> None:
    """The table of who a person said spoke a line (a new library has it from version 1)."""
    Base.metadata.create_all(conn, tables=[Base.metadata.tables[LineVoice.__tablename__]], checkfirst=True)


def _v10_stale_moments(conn: Connection) -> None:
    """The table of moments whose memories still show an old name (a new library has it from version 1)."""
    Base.metadata.create_all(conn, tables=[Base.metadata.tables[StaleMoment.__tablename__]], checkfirst=True)


def _v11_voice_kept(conn: Connection) -> None:
    """The voice's `kept`: a person merged or split it (a new library has it from version 1)."""
    columns = {row[1] for row in conn.execute(text("PRAGMA table_info(voice)"))}
    if "kept" not in columns:
        conn.execute(text("ALTER TABLE voice ADD COLUMN kept BOOLEAN NOT NULL DEFAULT 0"))


MIGRATIONS: list[Callable[[Connection], None]] = [
    _v1_create,
    record_tables.create_tables,
    textsearch.create_text_search,
    _v4_kept_moments,
    _v5_corrections,
    _v6_people,
    _v7_wearer_said,
    _v8_faces,
    _v9_line_voices,
    _v10_stale_moments,
    _v11_voice_kept,
]


def current_version(conn: Connection) -> int:
    return conn.execute(text("PRAGMA user_version")).scalar_one()


def migrate(engine: Engine) -> int:
    """Run every migration past the stored version; returns the new version."""
    with engine.begin() as conn:
        version = current_version(conn)
    for number, step in enumerate(MIGRATIONS[version:], start=version + 1):
        with engine.begin() as conn:
            step(conn)
            conn.execute(text(f"PRAGMA user_version={number}"))
    return len(MIGRATIONS)
