"""Who said it: the library's voices, each footage's speech turns, and the voice of each transcript line.

What is stored (migration 6):
- `voice`: one row per voice heard anywhere, with its centroid (the voice print), the name a person gave
  it, the footage count and the wearer flag;
- `voice_appearance`: the voice's cluster centroid in one footage, so the voice's centroid is always
  the speech-weighted mean of its appearances (a rerun of one footage or a merge recomputes it exactly);
- `speech_turn`: who spoke when (footage, start, end, voice);
- `transcript_segment.voice_id`: the voice heard longest during the line (a line that holds two voices
  is cut in two first: `memory.line_voices`), and its `speaker` the label
  that voice shows in memory text: "me" for the voice a person said is theirs, the name a person gave
  it, or nothing (an unnamed voice is only "Voice N" in lists: a made-up label in a memory would read
  like a name).

A footage's clusters join the library's voices by the `VoiceBook` rule (the closest voice at cosine
similarity >= LIBRARY_SIMILARITY, one cluster per voice per footage), built from the stored centroids,
so a later import matches the voices of earlier footage. That match is greedy, so its result depends on
the order footage arrive (the job queue runs them newest first: a voice first heard alone gathers another
voice like it before the footage where both speak keeps them apart), so each footage's speakers stage ends
by regrouping the library (`regroup`): the match replayed over every stored cluster in the order the
footage were recorded (`diarize.regroup`), the same whatever order they came in. A person's word wins: the
voices a person named, claimed, merged or split (`Voice.kept`), or said spoke a line, keep their clusters
(others may still join them). After each change the wearer is recomputed:
the voice a person said is theirs (`claim`), else the library's guess (the voice heard in the most
footage, the loudest on a tie).

Only a person's word puts a label into memory text, never the guess alone: measured against the test
days' scripts (benchmarks/diarization.py), the lines the guessed wearer's voice would label "me" were the
wearer's only 48 % (clean day) and 64 % (real day) of the time, and a wrong "me: ..." is evidence the
answers would read as the wearer's own words. The guess is offered ("me?") for the person to confirm.

Labels are written into the lines (`relabel`) rather than resolved by every reader, so the exports, the
memory builders and the window read "Maria: ..." as they read an imported transcript's speaker; a
rename rewrites only the lines of that voice and says which footage changed, so only their memories
are brought up to date (`pipeline.speakers`). Lines that came with their own speaker (imported
subtitles) are left as they are.

Splitting undoes a wrong match across footage: what a voice was heard as in one footage becomes a voice
of its own (`split`). A footage's cluster is not split further: its turns keep no embeddings. One line
given to the wrong voice is the person's to say (`set_line_voice`): their word is kept in its own table
(`schema.LineVoice`, migration 9), keyed by the line's span as a correction is, and put back over what the
turns say whenever the lines are attached again (`line_voices.attach_lines`: a rerun of the ASR or of the speakers
stage, `egodesk resume`, a re-import), followed by a merge, and kept through a split and a rename.

Forgetting a voice deletes its print (the voice row and its appearances) and its name; its turns and
lines stay, with no voice: the words remain as unnamed speech.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from sqlalchemy import case, delete, func, select, update
from sqlalchemy.orm import Session

from egodesk.memory.corrections import SPEECH, same_line
from egodesk.memory.line_voices import attach_lines, keep_said, say
from egodesk.memory.schema import Footage, LineVoice, SpeechTurn, TranscriptSegment, Voice, VoiceAppearance
from egodesk.perception.diarize import LIBRARY_SIMILARITY, Diarization, VoiceBook, VoiceCluster
from egodesk.perception.diarize import Voice as BookVoice
from egodesk.perception.diarize import regroup as regroup_voices

ME = "me"
NAME_MAX_CHARS = 80  # the width of a transcript line's speaker column
Spans = dict[int, list[tuple[float, float]]]  # footage id -> spans of lines whose label changed


class PeopleError(ValueError):
    """A change to the voices that cannot be made as asked, with the reason a person can act on."""


@dataclass
class SaidLine:
    """A transcript line and who it is said by: its row id, footage, wall-clock span, label, words and voice."""

    id: int
    footage_id: int
    start: float
    end: float
    speaker: str
    text: str
    voice_id: int | None


@dataclass
class VoiceInfo:
    id: int
    name: str | None
    label: str  # the name, else "Voice N"
    me: bool  # the wearer's: said by a person, or the library's guess (see `me_said`)
    footage: int  # how many footage it is heard in
    seconds: float  # its speech, in seconds, over the library
    me_said: bool = False  # a person said it is theirs


def _blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, np.float32).tobytes()


def _vector(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, np.float32)


def _normalise(vector: np.ndarray) -> np.ndarray:
    return vector / max(float(np.linalg.norm(vector)), 1e-8)


def _book(session: Session, similarity: float = LIBRARY_SIMILARITY, only: set[int] | None = None) -> tuple[VoiceBook, list[int]]:
    """The stored voices (those in `only`, when given) as a VoiceBook (its voice ids are positions in the
    returned list of row ids)."""
    voices = [v for v in session.scalars(select(Voice).order_by(Voice.id)) if only is None or v.id in only]
    query = select(VoiceAppearance).order_by(VoiceAppearance.footage_id)  # sums in one order
    appearances: dict[int, list[VoiceAppearance]] = defaultdict(list)
    for row in session.scalars(query if only is None else query.where(VoiceAppearance.voice_id.in_(only))):
        appearances[row.voice_id].append(row)
    book = VoiceBook(similarity)
    for position, voice in enumerate(voices):
        seen = appearances[voice.id]
        seconds = sum(a.seconds for a in seen) or max(voice.seconds, 1e-3)
        book.voices.append(
            BookVoice(
                position,
                _vector(voice.centroid) * seconds,
                seconds=seconds,
                footage={str(a.footage_id) for a in seen},
                level_sum=sum(a.seconds * a.level_db for a in seen) if seen else -120.0 * seconds,
            )
        )
    return book, [v.id for v in voices]


def _kept(session: Session) -> set[int]:
    """The voices a person decided: named, claimed, merged or split, or said to have spoken a line."""
    said = select(LineVoice.voice_id).where(LineVoice.voice_id.is_not(None))
    decided = Voice.name.is_not(None) | Voice.wearer_said | Voice.kept | Voice.id.in_(said)
    return set(session.scalars(select(Voice.id).where(decided)))


def regroup(session: Session, similarity: float = LIBRARY_SIMILARITY) -> set[int]:
    """Bring the library's grouping of voices back to the rule (`diarize.regroup`: the match replayed over
    every footage's clusters in the order they were recorded), so it does not depend on the order the
    footage's speakers stages ran. The voices a person decided (`_kept`) keep their appearances; the others'
    appearances are grouped again, and may join a kept voice. A group keeps the id of the old voice it
    holds the most speech of; turns, lines, prints and the wearer follow. Returns the footage whose voices
    changed (their lines attached again; the caller's `relabel` says which labels changed)."""
    kept = _kept(session)
    book, kept_ids = _book(session, similarity, only=kept)
    rows = session.execute(
        select(VoiceAppearance.id, VoiceAppearance.voice_id, VoiceAppearance.footage_id, VoiceAppearance.centroid)
        .add_columns(VoiceAppearance.seconds, VoiceAppearance.level_db)
        .join(Footage, Footage.id == VoiceAppearance.footage_id)
        .where(VoiceAppearance.voice_id.not_in(kept))
        .order_by(Footage.start_ts, Footage.id, VoiceAppearance.id)
    ).all()
    replay: dict[str, list[VoiceCluster]] = {}
    for row in rows:
        cluster = VoiceCluster(row.id, _vector(row.centroid), row.seconds, row.level_db)
        replay.setdefault(str(row.footage_id), []).append(cluster)
    _, found = regroup_voices(list(replay.items()), book.voices, similarity)
    group_of = {appearance: group for per in found.values() for appearance, group in per.items()}
    target = _stable_ids(session, rows, group_of, kept_ids)
    moved = [row for row in rows if target[row.id] != row.voice_id]
    if not moved:
        return set()
    _move(session, moved, target)
    changed = {row.footage_id for row in moved}
    _refresh(session, {row.voice_id for row in moved} | {target[row.id] for row in moved})
    for footage_id in sorted(changed):
        attach_lines(session, footage_id)
    return changed


def _stable_ids(session: Session, rows, group_of: dict[int, int], kept_ids: list[int]) -> dict[int, int]:
    """Appearance id -> the voice row it belongs to: a kept voice's, else the old voice whose speech the
    group holds most of (each old voice to one group, the largest shares first), else a new voice."""
    share: dict[tuple[int, int], float] = defaultdict(float)
    for row in rows:
        if group_of[row.id] >= len(kept_ids):
            share[(group_of[row.id], row.voice_id)] += row.seconds
    voice_of = dict(enumerate(kept_ids))
    taken: set[int] = set()
    for (group, voice_id), _ in sorted(share.items(), key=lambda item: (-item[1], item[0])):
        if group not in voice_of and voice_id not in taken:
            voice_of[group] = voice_id
            taken.add(voice_id)
    first = {group_of[row.id]: row for row in reversed(rows)}
    for group in sorted(set(group_of.values()) - set(voice_of)):
        voice = Voice(centroid=first[group].centroid, seconds=0.0, count=0)
        session.add(voice)
        session.flush()
        voice_of[group] = voice.id
    return {appearance: voice_of[group] for appearance, group in group_of.items()}


def _move(session: Session, moved, target: dict[int, int]) -> None:
    """Give the `moved` appearances (rows: id, voice_id, footage_id, centroid, seconds, level_db) and their
    footage's turns their `target` voices. The appearances are written anew (two voices of one footage may
    swap, which row by row would break the one-appearance-per-voice-per-footage rule for a moment); the
    turns by one statement per footage, each old voice to its new one."""
    session.execute(delete(VoiceAppearance).where(VoiceAppearance.id.in_([row.id for row in moved])))
    session.flush()
    by_footage: dict[int, dict[int, int]] = defaultdict(dict)
    for row in moved:
        by_footage[row.footage_id][row.voice_id] = target[row.id]
        session.add(
            VoiceAppearance(
                voice_id=target[row.id],
                footage_id=row.footage_id,
                centroid=row.centroid,
                seconds=row.seconds,
                level_db=row.level_db,
            )
        )
    for footage_id, mapping in by_footage.items():
        session.execute(
            update(SpeechTurn)
            .where(SpeechTurn.footage_id == footage_id, SpeechTurn.voice_id.in_(list(mapping)))
            .values(voice_id=case(mapping, value=SpeechTurn.voice_id))
        )
    session.flush()


def _refresh(session: Session, voice_ids: set[int]) -> None:
    """Recompute the centroid, speech and footage count of `voice_ids` from their appearances; an unnamed
    voice left with none is deleted (a named one, or one a person said spoke a line, keeps its last print,
    to be recognised again: deleting it would undo the person's word)."""
    for voice_id in voice_ids:
        voice = session.get(Voice, voice_id)
        if voice is None:
            continue
        seen = session.scalars(
            select(VoiceAppearance).where(VoiceAppearance.voice_id == voice_id).order_by(VoiceAppearance.footage_id)
        ).all()
        if not seen:
            if voice.name is None and session.scalar(select(LineVoice.id).where(LineVoice.voice_id == voice_id).limit(1)) is None:
                session.delete(voice)
            else:
                voice.count = 0
            continue
        total = sum(a.seconds * _vector(a.centroid) for a in seen)
        voice.centroid = _blob(_normalise(np.asarray(total)))
        voice.seconds = float(sum(a.seconds for a in seen))
        voice.count = len({a.footage_id for a in seen})
    session.flush()


def _set_wearer(session: Session) -> None:
    """Mark the wearer: the voice a person said is theirs, else the library's guess."""
    wearer = session.scalar(select(Voice.id).where(Voice.wearer_said))
    if wearer is None:
        book, ids = _book(session)
        position = book.wearer()
        wearer = ids[position] if position is not None else None
    for voice in session.scalars(select(Voice)):
        voice.wearer = voice.id == wearer
    session.flush()


def store_footage(session: Session, footage_id: int, diarization: Diarization, similarity: float = LIBRARY_SIMILARITY) -> int:
    """Replace a footage's turns and appearances with `diarization`'s (times in seconds into the file),
    matching its clusters to the library's voices, then regroup the library (`regroup`: other footage's
    voices may change, their lines with them); recompute the wearer and attach the footage's lines.
    Returns the number of turns stored."""
    origin = session.get_one(Footage, footage_id).start_ts
    before = set(session.scalars(select(VoiceAppearance.voice_id).where(VoiceAppearance.footage_id == footage_id)))
    session.execute(delete(SpeechTurn).where(SpeechTurn.footage_id == footage_id))
    session.execute(delete(VoiceAppearance).where(VoiceAppearance.footage_id == footage_id))
    session.flush()
    _refresh(session, before)
    book, ids = _book(session, similarity)
    found = book.add(str(footage_id), diarization)
    voice_of: dict[int, int] = {}
    for cluster in diarization.clusters:
        position = found[cluster.label]
        if position < len(ids):
            voice_of[cluster.label] = ids[position]
        else:
            voice = Voice(centroid=_blob(cluster.centroid), seconds=0.0, count=0)
            session.add(voice)
            session.flush()
            voice_of[cluster.label] = voice.id
        session.add(
            VoiceAppearance(
                voice_id=voice_of[cluster.label],
                footage_id=footage_id,
                centroid=_blob(cluster.centroid),
                seconds=max(cluster.seconds, 1e-3),  # the VoiceBook's weight, so a reloaded book is the same
                level_db=cluster.level_db,
            )
        )
    session.add_all(
        SpeechTurn(
            footage_id=footage_id,
            voice_id=voice_of[turn.label],
            start_ts=origin + turn.start,
            end_ts=origin + turn.end,
            level_db=turn.level_db,
        )
        for turn in diarization.turns
    )
    session.flush()
    _refresh(session, set(voice_of.values()))
    attach_lines(session, footage_id)
    regroup(session, similarity)
    _set_wearer(session)
    return len(diarization.turns)


def voices_in(session: Session, footage_id: int) -> set[int]:
    return set(session.scalars(select(VoiceAppearance.voice_id).where(VoiceAppearance.footage_id == footage_id)))


def footage_forgotten(session: Session, footage_id: int, voice_ids: set[int], window: tuple[float, float] | None) -> None:
    """After a footage (window None) or a time range of it is forgotten: the range's turns go (a whole
    footage's cascade), and the voices it was heard in (`voice_ids`, taken before) are recomputed from
    their other appearances: an unnamed voice heard nowhere else goes with it. Then the wearer and the
    labels. A range keeps the footage's appearance: its cluster centroid cannot be split by time."""
    if window is not None:
        lo, hi = window
        for table in (SpeechTurn, LineVoice):  # the person's word on a line goes with the line
            session.execute(delete(table).where(table.footage_id == footage_id, table.start_ts < hi, table.end_ts > lo))
    session.flush()
    _refresh(session, voice_ids)
    _set_wearer(session)
    relabel(session)


def set_line_voice(session: Session, segment_id: int, voice_id: int | None) -> tuple[SaidLine, Spans]:
    """A person says who said transcript line `segment_id`: voice `voice_id`, or None for "someone else"
    (someone the library does not know). Their word is kept (`LineVoice`) and outranks the turns from
    then on; the line, and the spans of the lines whose label changed (this one, when it did).

    "Someone else" leaves the line with no voice rather than making a new unnamed voice for it: a voice
    is a print that later footage are matched against, and one line has none (its turn's embeddings are
    not kept), so a made-up voice would either copy another's print or match nothing; with no voice the
    line says nobody's name in memory text, which is what an unnamed voice would say too, and lists no
    voice in People that was never heard."""
    line = session.get(TranscriptSegment, segment_id)
    if line is None:
        raise PeopleError(f"there is no line {segment_id} in this library (`egodesk clips FOOTAGE` shows each line's id)")
    if voice_id is not None:
        _voice(session, voice_id)
    span, before = (line.start_ts, line.end_ts), line.speaker
    for row in session.scalars(select(LineVoice).where(LineVoice.footage_id == line.footage_id)):
        if same_line(SPEECH, (row.start_ts, row.end_ts), span) > 0:
            session.delete(row)  # the latest word on a line is the one kept
    session.add(LineVoice(footage_id=line.footage_id, start_ts=span[0], end_ts=span[1], voice_id=voice_id))
    say(line, voice_id)
    session.flush()
    changed = relabel(session)
    session.refresh(line)
    if line.speaker != before and span not in changed.get(line.footage_id, []):
        changed.setdefault(line.footage_id, []).append(span)
    said = SaidLine(line.id, line.footage_id, span[0], span[1], line.speaker, line.text, line.voice_id)
    return said, changed


def labels(session: Session) -> dict[int, str]:
    """Each voice's label in memory text: "me" for the voice a person said is theirs, else its name, else ""
    (the guessed wearer's lines stay unlabelled: see the module docstring)."""
    return {v.id: ME if v.wearer_said else (v.name or "") for v in session.scalars(select(Voice))}


def relabel(session: Session) -> Spans:
    """Write each voiced line's label into its `speaker` (one UPDATE a voice, through its index: a library's
    lines are read only where they change); the spans of the lines changed, by footage."""
    changed: Spans = defaultdict(list)
    for voice_id, label in labels(session).items():
        rows = session.execute(
            update(TranscriptSegment)
            .where(TranscriptSegment.voice_id == voice_id, TranscriptSegment.speaker != label)
            .values(speaker=label)
            .returning(TranscriptSegment.footage_id, TranscriptSegment.start_ts, TranscriptSegment.end_ts)
        ).all()
        for footage_id, start, end in rows:
            changed[footage_id].append((start, end))
    return dict(changed)


def voices(session: Session) -> list[VoiceInfo]:
    """Every voice, the wearer first, then by speech time."""
    spoken = dict(
        session.execute(
            select(SpeechTurn.voice_id, func.sum(SpeechTurn.end_ts - SpeechTurn.start_ts))
            .where(SpeechTurn.voice_id.is_not(None))
            .group_by(SpeechTurn.voice_id)
        ).all()
    )
    rows = [
        VoiceInfo(
            v.id,
            v.name,
            v.name or f"Voice {v.id}",
            bool(v.wearer),
            v.count,
            round(float(spoken.get(v.id) or 0.0), 2),
            bool(v.wearer_said),
        )
        for v in session.scalars(select(Voice))
    ]
    return sorted(rows, key=lambda v: (not v.me, -v.seconds, v.id))


def samples(session: Session, per_voice: int = 3) -> dict[int, list[tuple[int, float, float]]]:
    """Each voice's longest turns, to listen to before naming it: (footage id, start, end), wall clock."""
    out: dict[int, list[tuple[int, float, float]]] = defaultdict(list)
    rows = session.execute(
        select(SpeechTurn.voice_id, SpeechTurn.footage_id, SpeechTurn.start_ts, SpeechTurn.end_ts)
        .where(SpeechTurn.voice_id.is_not(None))
        .order_by((SpeechTurn.end_ts - SpeechTurn.start_ts).desc(), SpeechTurn.id)
    ).all()
    for voice_id, footage_id, start, end in rows:
        if voice_id is not None and len(out[voice_id]) < per_voice:
            out[voice_id].append((footage_id, start, end))
    return dict(out)


def _voice(session: Session, voice_id: int) -> Voice:
    voice = session.get(Voice, voice_id)
    if voice is None:
        raise PeopleError(f"there is no voice {voice_id} in this library (see `egodesk people list`)")
    return voice


_NOT_IN_NAME = re.compile(r"[:\x00-\x1f\x7f]")


def check_name(name: str) -> str:
    """The name as it will be stored (spaces trimmed), or PeopleError saying why it cannot be one."""
    name = " ".join((name or "").split())
    if not name:
        raise PeopleError("a name cannot be empty")
    if len(name) > NAME_MAX_CHARS:
        raise PeopleError(f"a name can be at most {NAME_MAX_CHARS} characters, not {len(name)}")
    if _NOT_IN_NAME.search(name):
        raise PeopleError("a name cannot hold a colon or a control character (a line reads “Name: words”)")
    if name.casefold() == ME:
        raise PeopleError("“me” is the wearer's own voice: it is found by itself, not named")
    return name


def rename(session: Session, voice_id: int, name: str) -> Spans:
    """Name a voice; the spans of the lines whose label changed."""
    name = check_name(name)
    voice = _voice(session, voice_id)
    other = session.scalar(select(Voice.id).where(Voice.id != voice_id, func.lower(Voice.name) == name.lower()))
    if other is not None:
        raise PeopleError(f"voice {other} is already called {name}: merge them (`egodesk people merge {other} {voice_id}`)")
    voice.name = name
    session.flush()
    return relabel(session)


def claim(session: Session, voice_id: int) -> Spans:
    """A person says voice `voice_id` is theirs ("This is me"): it is the wearer from now on, whatever the
    guess, and its lines say "me". The spans of the lines whose label changed."""
    _voice(session, voice_id)
    session.execute(update(Voice).values(wearer_said=Voice.id == voice_id))
    session.flush()
    session.expire_all()
    _set_wearer(session)
    return relabel(session)


def merge(session: Session, into: int, other: int) -> Spans:
    """Make voice `other` part of voice `into` (its appearances, turns and lines); `into` keeps its name,
    or takes `other`'s if it has none. The spans of the lines whose label changed."""
    if into == other:
        raise PeopleError(f"voice {into} cannot be merged with itself")
    keep, gone = _voice(session, into), _voice(session, other)
    name = keep.name or gone.name
    said = keep.wearer_said or gone.wearer_said
    mine = {a.footage_id: a for a in session.scalars(select(VoiceAppearance).where(VoiceAppearance.voice_id == into))}
    for appearance in session.scalars(select(VoiceAppearance).where(VoiceAppearance.voice_id == other)).all():
        same = mine.get(appearance.footage_id)
        if same is None:
            appearance.voice_id = into
            continue
        seconds = same.seconds + appearance.seconds
        same.centroid = _blob(
            _normalise(same.seconds * _vector(same.centroid) + appearance.seconds * _vector(appearance.centroid))
        )
        same.level_db = (same.seconds * same.level_db + appearance.seconds * appearance.level_db) / seconds
        same.seconds = seconds
        session.delete(appearance)
    session.flush()
    session.execute(update(SpeechTurn).where(SpeechTurn.voice_id == other).values(voice_id=into))
    session.execute(update(TranscriptSegment).where(TranscriptSegment.voice_id == other).values(voice_id=into))
    session.execute(update(LineVoice).where(LineVoice.voice_id == other).values(voice_id=into))  # the person's word follows
    session.execute(delete(Voice).where(Voice.id == other))
    keep.name, keep.wearer_said, keep.kept = name, said, True
    session.flush()
    _refresh(session, {into})
    _set_wearer(session)
    return relabel(session)


def split(session: Session, voice_id: int, footage_id: int) -> tuple[int, Spans]:
    """Take what voice `voice_id` was heard as in footage `footage_id` out of it, as a new unnamed voice
    (someone else matched to it by the library: its appearance there, turns and lines; a line a person said
    is that voice's stays with it). The voice a person named or claimed keeps its name and "me"; the new
    voice's print is that footage's cluster, so a rerun of the footage's speakers stage matches the cluster
    to it again. Returns the new voice's id and the spans of the lines whose label changed."""
    who = _voice(session, voice_id).name or f"voice {voice_id}"
    appearance = session.scalar(
        select(VoiceAppearance).where(VoiceAppearance.voice_id == voice_id, VoiceAppearance.footage_id == footage_id)
    )
    if appearance is None:
        raise PeopleError(f"{who} is not heard in footage {footage_id}")
    if session.scalar(select(func.count()).where(VoiceAppearance.voice_id == voice_id)) == 1:
        raise PeopleError(f"{who} is heard in footage {footage_id} alone: there is nothing to split it from")
    new = Voice(centroid=appearance.centroid, seconds=appearance.seconds, count=1, kept=True)
    session.add(new)
    _voice(session, voice_id).kept = True  # the person's split stays: `regroup` would join them again
    session.flush()
    appearance.voice_id = new.id
    session.execute(
        update(SpeechTurn).where(SpeechTurn.voice_id == voice_id, SpeechTurn.footage_id == footage_id).values(voice_id=new.id)
    )
    session.execute(
        update(TranscriptSegment)
        .where(TranscriptSegment.voice_id == voice_id, TranscriptSegment.footage_id == footage_id)
        .values(voice_id=new.id)
    )
    keep_said(session, footage_id)
    session.flush()
    _refresh(session, {voice_id, new.id})
    _set_wearer(session)
    return new.id, relabel(session)


def forget_voice(session: Session, voice_id: int) -> Spans:
    """Delete a voice's print and name; its turns and lines stay with no voice, and a person's word that a
    line was theirs says no voice from then on (the foreign key sets it null: the line stays unnamed
    speech through a rerun). The spans of the lines that lost their label (and of any other whose label
    changed with the wearer)."""
    voice = _voice(session, voice_id)
    changed: Spans = defaultdict(list)
    for line in session.scalars(select(TranscriptSegment).where(TranscriptSegment.voice_id == voice_id)):
        if line.speaker:
            changed[line.footage_id].append((line.start_ts, line.end_ts))
        line.speaker = ""
        line.voice_id = None
    session.execute(update(SpeechTurn).where(SpeechTurn.voice_id == voice_id).values(voice_id=None))
    session.delete(voice)
    session.flush()
    _set_wearer(session)
    for footage_id, spans in relabel(session).items():
        changed[footage_id] += spans
    return dict(changed)
