"""Naming a voice on the 200-hour scale library (`scale_library.py`): how long until every line of that
person says the name (issue 50: under 2 s), and how long the captions and memories that showed the old
name take to follow (`Library.refresh_memories`, the People panel's next task).

    .venv/bin/python benchmarks/rename_voice.py [--hours 200] [--share 3] [--lines-only] [--json FILE]

At 200 hours the memories' part takes about half an hour (each moment's caption described and embedded
again, ~0.5 s): `--lines-only` times the changes alone there, and a small library (`--hours 2`) gives
the cost of the memories a moment.

The scale library has speech but no voices (it runs no speakers stage), so a copy of it (database and
index files, in a scratch folder) is given one person heard in every footage, who says every `share`-th
line: a partner heard every day. That voice is then named, named again, and claimed as the wearer's, each
through `Library` as the People panel does, each followed by the refresh of the memories it marked.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np
from common import Report, add_output_args
from search_latency import scale_library, scratch_copy
from sqlalchemy import func, select, update

from egodesk.memory.schema import Footage, StaleMoment, TranscriptSegment, Voice, VoiceAppearance
from egodesk.pipeline.library import Library

GOAL_S = 2.0


def add_partner(library: Library, share: int) -> tuple[int, int]:
    """One voice heard in every footage, saying every `share`-th line; its id and its number of lines."""
    with library.store.session() as session:
        centroid = np.ones(256, np.float32) / 16.0
        voice = Voice(centroid=centroid.tobytes(), seconds=0.0, count=0)
        session.add(voice)
        session.flush()
        footage = list(session.scalars(select(Footage.id)))
        session.add_all(
            VoiceAppearance(voice_id=voice.id, footage_id=f, centroid=centroid.tobytes(), seconds=60.0, level_db=-30.0)
            for f in footage
        )
        lines = list(session.scalars(select(TranscriptSegment.id).order_by(TranscriptSegment.id)))[::share]
        session.execute(update(TranscriptSegment).where(TranscriptSegment.id.in_(lines)).values(voice_id=voice.id))
        return voice.id, len(lines)


def timed(change, report: Report, label: str, library: Library, refresh: bool) -> None:
    """Time a change (the lines relabelled, the moments marked) and then the memories following it."""
    with library.store.session() as session:
        before = session.scalar(select(func.count()).select_from(StaleMoment))
    started = time.perf_counter()
    change()
    change_s = time.perf_counter() - started
    with library.store.session() as session:
        moments = session.scalar(select(func.count()).select_from(StaleMoment)) - before
        footage = session.scalar(select(func.count(func.distinct(StaleMoment.footage_id))))
    report.add(f"{label}: the lines say it", change_s, "s", note=f"goal < {GOAL_S:g} s; {moments} moments marked")
    if refresh:
        started = time.perf_counter()
        library.refresh_memories()
        refresh_s = time.perf_counter() - started
        report.add(f"{label}: the memories follow", refresh_s, "s", note=f"{moments} moments in {footage} footage")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=200.0)
    parser.add_argument("--share", type=int, default=3, help="the person says every N-th line")
    parser.add_argument("--lines-only", action="store_true", help="time the changes, not the memories following them")
    add_output_args(parser)
    args = parser.parse_args(argv)
    source = scale_library(args.hours)
    report = Report("naming a voice")
    with tempfile.TemporaryDirectory(prefix="egodesk-rename-") as scratch:
        library = Library(scratch_copy(source, scratch, indices=True))
        voice_id, lines = add_partner(library, args.share)
        print(f"{args.hours:g} h library, one voice saying {lines} lines")

        timed(lambda: library.name_voice(voice_id, "Sam"), report, "name a voice", library, not args.lines_only)
        timed(lambda: library.name_voice(voice_id, "Samantha"), report, "rename it", library, not args.lines_only)
        timed(lambda: library.claim_voice(voice_id), report, "claim it as me", library, not args.lines_only)
        library.close()
    report.finish(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
