"""Who said each transcript line: the voice its speech turns give it, the line cut where its speaker
changes, and a person's word over both.

The recogniser cuts lines by pauses and punctuation, not by who speaks, so one line can hold two people:
"I put my keys on the shelf by the front door. Do not forget it is recycling day today." is the wearer,
then Maria. Labelled whole by the voice heard longest, the second sentence read as the wearer's and
"Who told me it is recycling day?" had no answer. So a line with word timings is cut where the voice
changes (`cut_at_voices`): each word belongs to the turn holding its middle, and a voice holding fewer
than MIN_PART_WORDS of the line's words is taken for the edge of a turn (diarization places turn edges
to a few tenths of a second), not a speaker of its own. A line without word timings (imported
subtitles, a line a person corrected) stays whole.

Then each line gets the voice its turns overlap longest (`attach_lines`), and the person's word on who
said a line (`schema.LineVoice`, `people.set_line_voice`) goes back over what the turns say
(`keep_said`), to the line that overlaps its span most.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from egodesk.core.words import spoken_text
from egodesk.memory.clipspans import clip_holding
from egodesk.memory.corrections import SPEECH, same_line
from egodesk.memory.schema import Clip, LineVoice, SpeechTurn, TranscriptSegment

MIN_PART_WORDS = 3  # fewer words of a line in one voice are the edge of a turn, not a speaker's part

Turn = tuple[float, float, int]  # wall-clock start, end, voice id
# The lines the turns speak for: not those imported with a speaker of their own (a label, no voice).
_HEARD = TranscriptSegment.voice_id.is_not(None) | (TranscriptSegment.speaker == "")


def attach_lines(session: Session, footage_id: int) -> None:
    """Cut the footage's lines where their speaker changes (`cut_at_voices`), then give each line the
    voice its turns overlap longest (none where no turn does). Lines that came with a speaker of their
    own (imported) are left alone; a line a person said who spoke gets their word back (`keep_said`);
    labels follow in `people.relabel`."""
    rows = session.execute(
        select(SpeechTurn.start_ts, SpeechTurn.end_ts, SpeechTurn.voice_id).where(SpeechTurn.footage_id == footage_id)
    ).all()
    turns: list[Turn] = [(start, end, voice_id) for start, end, voice_id in rows if voice_id is not None]
    cut_at_voices(session, footage_id, turns)
    lines = session.scalars(select(TranscriptSegment).where(TranscriptSegment.footage_id == footage_id, _HEARD)).all()
    for line in lines:
        heard: dict[int, float] = defaultdict(float)
        for start, end, voice_id in turns:
            overlap = min(end, line.end_ts) - max(start, line.start_ts)
            if overlap > 0:
                heard[voice_id] += overlap
        best = max(heard, key=lambda v: heard[v]) if heard else None
        if line.voice_id != best:
            line.voice_id = best
            if best is None:
                line.speaker = ""
    keep_said(session, footage_id)
    session.flush()


def voice_parts(words: Sequence[Sequence], turns: Sequence[Turn]) -> list[list[Sequence]]:
    """A line's words ([word, start, end, probability], in order) in parts of one voice each. A word's
    voice is that of the turn holding its middle; a word no turn holds goes with the part before it (the
    first ones with the first part); a part with fewer than MIN_PART_WORDS voiced words joins the part
    before it (the first part the one after it). One part: the line is one speaker's."""
    parts: list[tuple[int, list[Sequence], int]] = []  # voice, words, words in that voice
    leading: list[Sequence] = []
    for word in words:
        middle = (word[1] + word[2]) / 2
        voice = next((v for start, end, v in turns if start <= middle <= end), None)
        if voice is None:
            (parts[-1][1] if parts else leading).append(word)
        elif parts and parts[-1][0] == voice:
            parts[-1][1].append(word)
            parts[-1] = (voice, parts[-1][1], parts[-1][2] + 1)
        else:
            parts.append((voice, [word], 1))
    if not parts:
        return [list(words)]
    parts[0][1][:0] = leading
    joined: list[tuple[int, list[Sequence], int]] = []
    for voice, part, voiced in parts:
        if joined and (voiced < MIN_PART_WORDS or joined[-1][0] == voice):
            joined[-1] = (joined[-1][0], joined[-1][1] + part, joined[-1][2] + voiced)
        else:
            joined.append((voice, part, voiced))
    if len(joined) > 1 and joined[0][2] < MIN_PART_WORDS:
        first = joined.pop(0)
        joined[0] = (joined[0][0], first[1] + joined[0][1], joined[0][2] + first[2])
    return [part for _, part, _ in joined]


def cut_at_voices(session: Session, footage_id: int, turns: Sequence[Turn]) -> bool:
    """Cut each of the footage's lines that holds more than one voice (`voice_parts`) into one line per
    part, each with its words, its span (the words', the first and last keeping the line's edges) and the
    clip holding its start; the footage's lines are then numbered again in time order. True when a line
    was cut."""
    if not turns:
        return False
    lines = session.scalars(select(TranscriptSegment).where(TranscriptSegment.footage_id == footage_id, _HEARD)).all()
    clips = session.scalars(select(Clip).where(Clip.footage_id == footage_id).order_by(Clip.start_ts)).all()
    cut = False
    for line in lines:
        if not line.words:
            continue
        parts = voice_parts(line.words, turns)
        if len(parts) < 2:
            continue
        cut = True
        for i, part in enumerate(parts):
            start = line.start_ts if i == 0 else float(part[0][1])
            end = line.end_ts if i == len(parts) - 1 else float(part[-1][2])
            clip = clip_holding(clips, start)
            session.add(
                TranscriptSegment(
                    footage_id=footage_id,
                    clip_id=clip.id if clip is not None else line.clip_id,
                    idx=-1 - i - 1000 * line.idx,  # unique until the numbering below
                    start_ts=start,
                    end_ts=end,
                    text=spoken_text(str(w[0]) for w in part),
                    language=line.language,
                    words=[list(w) for w in part],
                )
            )
        session.delete(line)
    if cut:
        session.flush()
        _number(session, footage_id)
    return cut


def _number(session: Session, footage_id: int) -> None:
    """Number the footage's lines 0, 1, ... in time order (the order readers sort them by)."""
    lines = session.scalars(
        select(TranscriptSegment)
        .where(TranscriptSegment.footage_id == footage_id)
        .order_by(TranscriptSegment.start_ts, TranscriptSegment.idx)
    ).all()
    top = max((abs(line.idx) for line in lines), default=0) + 1
    session.execute(  # out of the way first: (footage, idx) is unique at every row written
        update(TranscriptSegment).where(TranscriptSegment.footage_id == footage_id).values(idx=TranscriptSegment.idx + 2 * top)
    )
    session.flush()
    for idx, line in enumerate(lines):
        line.idx = idx
    session.flush()


def say(line: TranscriptSegment, voice_id: int | None) -> None:
    """Give `line` the voice a person said; with none its label goes too ("someone else" names nobody)."""
    line.voice_id = voice_id
    if voice_id is None:
        line.speaker = ""


def keep_said(session: Session, footage_id: int) -> None:
    """Put the person's word on who said each line back over the footage's lines: each to the line that
    overlaps its span most, when they share at least half the shorter (`corrections.same_line`: a rerun
    of the ASR may cut the lines a little differently). A word whose line is gone waits for it."""
    said = session.scalars(select(LineVoice).where(LineVoice.footage_id == footage_id).order_by(LineVoice.id)).all()
    if not said:
        return
    lines = session.scalars(select(TranscriptSegment).where(TranscriptSegment.footage_id == footage_id)).all()
    for row in said:
        span = (row.start_ts, row.end_ts)
        best = max(lines, key=lambda line: same_line(SPEECH, span, (line.start_ts, line.end_ts)), default=None)
        if best is not None and same_line(SPEECH, span, (best.start_ts, best.end_ts)) > 0:
            say(best, row.voice_id)
