"""The library's ORM tables (SQLAlchemy declarative models): footage, jobs, clips, keyframes, transcript
segments, captions, memory units, their vectors, the index manifest, the moments a person kept (stars
and notes), their corrections of what was misheard or misread, the voices heard (who spoke when, and who said
a line where a person said so) and the faces seen (who was there).

Only the table definitions live here, so the store (engine and sessions), the migrations and the builders'
own tables (record_tables) can all import them without importing each other. Deleting a footage cascades
to everything derived from it.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Index, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


class Footage(Base):
    __tablename__ = "footage"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    content_hash: Mapped[str] = mapped_column(String(64), unique=True)
    path: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(16), default="video")  # FootageKind
    title: Mapped[str] = mapped_column(Text, default="")
    start_ts: Mapped[float] = mapped_column(Float, default=0.0)
    start_source: Mapped[str] = mapped_column(String(16), default="mtime")  # metadata|filename|mtime|user|text
    duration: Mapped[float] = mapped_column(Float, default=0.0)
    fps: Mapped[float] = mapped_column(Float, default=0.0)
    width: Mapped[int] = mapped_column(Integer, default=0)
    height: Mapped[int] = mapped_column(Integer, default=0)
    has_audio: Mapped[bool] = mapped_column(Boolean, default=False)
    imported_at: Mapped[float] = mapped_column(Float, default=time.time)

    clips: Mapped[list[Clip]] = relationship(back_populates="footage", cascade="all, delete-orphan", passive_deletes=True)
    jobs: Mapped[list[Job]] = relationship(back_populates="footage", cascade="all, delete-orphan", passive_deletes=True)

    @property
    def end_ts(self) -> float:
        return self.start_ts + self.duration


class Job(Base):
    """One stage of one footage's processing; the durable state ingest resumes from."""

    __tablename__ = "job"
    __table_args__ = (UniqueConstraint("footage_id", "stage"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"), index=True)
    stage: Mapped[str] = mapped_column(String(32))
    state: Mapped[str] = mapped_column(String(16), default="pending")  # pending|running|done|failed|cancelled
    done: Mapped[int] = mapped_column(Integer, default=0)
    total: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str] = mapped_column(Text, default="")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[float] = mapped_column(Float, default=time.time)

    footage: Mapped[Footage] = relationship(back_populates="jobs")


class Clip(Base):
    __tablename__ = "clip"
    __table_args__ = (UniqueConstraint("footage_id", "idx"), Index("ix_clip_time", "start_ts", "end_ts"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"), index=True)
    idx: Mapped[int] = mapped_column(Integer)
    offset: Mapped[float] = mapped_column(Float)  # seconds into the file
    start_ts: Mapped[float] = mapped_column(Float)
    end_ts: Mapped[float] = mapped_column(Float)

    footage: Mapped[Footage] = relationship(back_populates="clips")
    keyframes: Mapped[list[Keyframe]] = relationship(cascade="all, delete-orphan", passive_deletes=True, order_by="Keyframe.idx")
    caption: Mapped[Caption | None] = relationship(cascade="all, delete-orphan", passive_deletes=True, uselist=False)


class Keyframe(Base):
    __tablename__ = "keyframe"
    __table_args__ = (UniqueConstraint("clip_id", "idx"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    clip_id: Mapped[int] = mapped_column(ForeignKey("clip.id", ondelete="CASCADE"), index=True)
    idx: Mapped[int] = mapped_column(Integer)
    offset: Mapped[float] = mapped_column(Float)
    ts: Mapped[float] = mapped_column(Float)
    thumb_path: Mapped[str] = mapped_column(Text, default="")
    feature: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)  # float32 tagger features
    labels: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)  # [[label, score], ...]
    ocr_text: Mapped[str | None] = mapped_column(Text, nullable=True)  # None = not run yet


class TranscriptSegment(Base):
    __tablename__ = "transcript_segment"
    __table_args__ = (UniqueConstraint("footage_id", "idx"), Index("ix_segment_time", "start_ts", "end_ts"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"), index=True)
    clip_id: Mapped[int | None] = mapped_column(ForeignKey("clip.id", ondelete="CASCADE"), index=True, nullable=True)
    idx: Mapped[int] = mapped_column(Integer)
    start_ts: Mapped[float] = mapped_column(Float)
    end_ts: Mapped[float] = mapped_column(Float)
    text: Mapped[str] = mapped_column(Text)
    language: Mapped[str] = mapped_column(String(16), default="")
    words: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)  # [[word, start_ts, end_ts, prob], ...]
    speaker: Mapped[str] = mapped_column(String(80), default="")
    # The voice heard most during the line (`line_voices.attach_lines`); `speaker` then holds its label ("me", a
    # name, or "" for an unnamed voice), rewritten when voices are renamed, merged or forgotten.
    voice_id: Mapped[int | None] = mapped_column(ForeignKey("voice.id", ondelete="SET NULL"), index=True, nullable=True)


class Caption(Base):
    """The parent unit of parent retrieval: one description of one clip."""

    __tablename__ = "caption"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    clip_id: Mapped[int] = mapped_column(ForeignKey("clip.id", ondelete="CASCADE"), unique=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"), index=True)
    start_ts: Mapped[float] = mapped_column(Float)
    end_ts: Mapped[float] = mapped_column(Float)
    text: Mapped[str] = mapped_column(Text)
    captioner: Mapped[str] = mapped_column(String(32))  # describe|vlm|server|imported
    kind: Mapped[str] = mapped_column(String(16), default="caption")  # caption|narration


class Unit(Base):
    """A retrievable memory unit: a caption, a subchunk, a transcript group, an interaction record, a
    consolidated memory entry, an atomic statement, a keyframe... `kind` says which; `view` names the
    index family it belongs to where a kind has several (EgoCITE's action/utterance/activity/
    conversation). Children (subchunks) point at their parent unit."""

    __tablename__ = "unit"
    __table_args__ = (Index("ix_unit_kind_view", "kind", "view"), Index("ix_unit_time", "start_ts", "end_ts"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"), index=True)
    clip_id: Mapped[int | None] = mapped_column(ForeignKey("clip.id", ondelete="CASCADE"), index=True, nullable=True)
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("unit.id", ondelete="CASCADE"), index=True, nullable=True)
    kind: Mapped[str] = mapped_column(String(24))
    view: Mapped[str] = mapped_column(String(24), default="")
    start_ts: Mapped[float] = mapped_column(Float)
    end_ts: Mapped[float] = mapped_column(Float)
    text: Mapped[str] = mapped_column(Text, default="")
    meta: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    builder: Mapped[str] = mapped_column(String(32), default="")  # which builder/model made it


class Vector(Base):
    """A unit's vector in one embedding space (the index it belongs to). SQLite is the source of truth:
    every hnswlib file can be rebuilt from these rows."""

    __tablename__ = "vector"

    unit_id: Mapped[int] = mapped_column(ForeignKey("unit.id", ondelete="CASCADE"), primary_key=True)
    space: Mapped[str] = mapped_column(String(32), primary_key=True, index=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)  # float32, L2-normalised


class IndexInfo(Base):
    """The manifest row of one hnswlib index file, checked when the file is loaded."""

    __tablename__ = "index_info"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    dim: Mapped[int] = mapped_column(Integer)
    metric: Mapped[str] = mapped_column(String(16), default="cosine")
    model_id: Mapped[str] = mapped_column(String(64), default="")
    count: Mapped[int] = mapped_column(Integer, default=0)
    file: Mapped[str] = mapped_column(Text, default="")
    sha256: Mapped[str] = mapped_column(String(64), default="")
    built_at: Mapped[float] = mapped_column(Float, default=time.time)


class Star(Base):
    """A moment a person starred: a time span of one footage (wall-clock seconds, like every span here).
    Starring the same span again is the same star (unique), so a double click cannot make two."""

    __tablename__ = "star"
    __table_args__ = (UniqueConstraint("footage_id", "start_ts", "end_ts"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"), index=True)
    start_ts: Mapped[float] = mapped_column(Float)
    end_ts: Mapped[float] = mapped_column(Float)
    created_at: Mapped[float] = mapped_column(Float, default=time.time)


class Note(Base):
    """A person's note on a moment of one footage. It is theirs, not derived: no rebuild recreates it, so
    only the person (or forgetting the footage) deletes it. The search index and the parent-child memory
    hold copies of its text that follow it."""

    __tablename__ = "note"
    __table_args__ = (Index("ix_note_time", "start_ts", "end_ts"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"), index=True)
    start_ts: Mapped[float] = mapped_column(Float)
    end_ts: Mapped[float] = mapped_column(Float)
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[float] = mapped_column(Float, default=time.time)
    updated_at: Mapped[float] = mapped_column(Float, default=time.time)


class Correction(Base):
    """A person's correction of a line the machine heard (a transcript segment, kind "speech") or read (a
    keyframe's on-screen text, kind "screen"), keyed by its footage and the line's span (a keyframe's span
    is its one instant), not by the row: a stage run again deletes and rewrites those rows, and the
    correction is applied over what it writes (`corrections.apply_corrections`). Every save is a row, so
    the latest one of a line is in force and undo deletes it; `heard` and `heard_words` keep what the
    machine had written before the first correction, which an undo of that one puts back."""

    __tablename__ = "correction"
    __table_args__ = (Index("ix_correction_line", "footage_id", "kind", "start_ts"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # speech | screen
    start_ts: Mapped[float] = mapped_column(Float)
    end_ts: Mapped[float] = mapped_column(Float)
    text: Mapped[str] = mapped_column(Text)
    heard: Mapped[str] = mapped_column(Text, default="")
    heard_words: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[float] = mapped_column(Float, default=time.time)


class Voice(Base):
    """A voice the library has heard (`memory.people`): its centroid (the voice print: the speech-weighted
    mean of its appearances' embeddings, L2-normalised float32), the name a person gave it, and whether it
    is the wearer's own ("me"). Forgetting it deletes the row, its appearances with it."""

    __tablename__ = "voice"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str | None] = mapped_column(String(80), nullable=True)
    centroid: Mapped[bytes] = mapped_column(LargeBinary)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)  # the speech its centroid averages
    count: Mapped[int] = mapped_column(Integer, default=0)  # footage it is heard in
    wearer: Mapped[bool] = mapped_column(Boolean, default=False)
    # A person said this voice is theirs ("This is me"); until then `wearer` is only the library's guess.
    wearer_said: Mapped[bool] = mapped_column(Boolean, default=False)
    # A person merged or split this voice: the library's regrouping (`people.regroup`) leaves it as they made it.
    kept: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")


class VoiceAppearance(Base):
    """One voice in one footage: the centroid of the footage's cluster matched to it, so a rerun of that
    footage's speakers stage or a merge recomputes the voice's centroid exactly."""

    __tablename__ = "voice_appearance"
    __table_args__ = (UniqueConstraint("voice_id", "footage_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    voice_id: Mapped[int] = mapped_column(ForeignKey("voice.id", ondelete="CASCADE"), index=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"), index=True)
    centroid: Mapped[bytes] = mapped_column(LargeBinary)
    seconds: Mapped[float] = mapped_column(Float)
    level_db: Mapped[float] = mapped_column(Float)


class SpeechTurn(Base):
    """A span of one footage's audio spoken by one voice (wall-clock seconds). A forgotten voice's turns
    stay, with no voice: someone spoke there."""

    __tablename__ = "speech_turn"
    __table_args__ = (Index("ix_turn_time", "footage_id", "start_ts"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"))
    voice_id: Mapped[int | None] = mapped_column(ForeignKey("voice.id", ondelete="SET NULL"), index=True, nullable=True)
    start_ts: Mapped[float] = mapped_column(Float)
    end_ts: Mapped[float] = mapped_column(Float)
    level_db: Mapped[float] = mapped_column(Float, default=-120.0)


class LineVoice(Base):
    """A person's word on who said one transcript line (`people.set_line_voice`): the voice, or none
    ("someone else": the line names nobody). Keyed by its footage and the line's span, not by the row, as a
    correction is: the ASR run again deletes and rewrites the lines, and `line_voices.attach_lines` puts the
    person's word back over what the turns say. Forgetting the voice leaves the row with no voice, so the
    line stays unnamed speech."""

    __tablename__ = "line_voice"
    __table_args__ = (Index("ix_line_voice_line", "footage_id", "start_ts"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"))
    start_ts: Mapped[float] = mapped_column(Float)
    end_ts: Mapped[float] = mapped_column(Float)
    voice_id: Mapped[int | None] = mapped_column(ForeignKey("voice.id", ondelete="SET NULL"), index=True, nullable=True)
    created_at: Mapped[float] = mapped_column(Float, default=time.time)


class StaleMoment(Base):
    """A moment whose caption and parent-child memory still show a speaker's or a face's old name: a voice
    or face was named, merged, split or claimed, or a line given to another voice. The change writes the
    row in its own transaction and returns at once (the names are in the lines already);
    `pipeline.speakers.refresh_stale` describes the moment again and deletes the row. Kept in SQLite, so a
    quit before the refresh leaves it to the next run of the stages."""

    __tablename__ = "stale_moment"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"), index=True)
    start_ts: Mapped[float] = mapped_column(Float)
    end_ts: Mapped[float] = mapped_column(Float)


class Face(Base):
    """A face the library has seen (`memory.faces`): its centroid (the face print: the mean of its
    sightings' 128-d embeddings, float32) and the name a person gave it. Forgetting it deletes the row
    and every sighting's print."""

    __tablename__ = "face"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str | None] = mapped_column(String(80), nullable=True)
    centroid: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    sightings: Mapped[int] = mapped_column(Integer, default=0)
    count: Mapped[int] = mapped_column(Integer, default=0)  # footage it is seen in


class FaceSighting(Base):
    """One face found in one keyframe: where (the clip, seconds into the footage, wall clock, its box in
    the frame's pixels and the frame's size), the detector's score, its print (128 float32) and the face
    it was matched to. A forgotten face's sightings stay with no print and no face: someone was there."""

    __tablename__ = "face_sighting"
    __table_args__ = (Index("ix_face_sighting_time", "footage_id", "ts"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"))
    clip_id: Mapped[int] = mapped_column(ForeignKey("clip.id", ondelete="CASCADE"), index=True)
    offset: Mapped[float] = mapped_column(Float)
    ts: Mapped[float] = mapped_column(Float)
    left: Mapped[int] = mapped_column(Integer)
    top: Mapped[int] = mapped_column(Integer)
    right: Mapped[int] = mapped_column(Integer)
    bottom: Mapped[int] = mapped_column(Integer)
    frame_width: Mapped[int] = mapped_column(Integer)
    frame_height: Mapped[int] = mapped_column(Integer)
    score: Mapped[float] = mapped_column(Float)
    vector: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    face_id: Mapped[int | None] = mapped_column(ForeignKey("face.id", ondelete="SET NULL"), index=True, nullable=True)
