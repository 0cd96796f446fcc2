"""What cutting transcript lines where their speaker changes (`memory.line_voices`) costs: a synthetic
footage of `--minutes` of conversation (three voices taking turns of 1-6 s, lines of 12 words at 0.3 s a
word whose edges fall anywhere in the turns, so most lines hold two voices), clips of 15 s, stored in a
real SQLite store.

Timed, median of `--repeat`: the ASR's write of the footage's transcript (`speech.write_transcript`: the
lines, the cut, each line's voice, the person's corrections, the labels) with word timings (the lines are
cut) and without (nothing can be cut), and attaching the lines again once cut (what a regroup or a rerun
of the speakers stage does: nothing left to cut). Printed per hour of speech.

    .venv/bin/python benchmarks/line_cut.py [--minutes 60] [--repeat 5] [--json FILE]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from common import Report, add_output_args, median_ms
from sqlalchemy import func, select

from egodesk.memory.line_voices import attach_lines
from egodesk.memory.schema import Clip, Footage, SpeechTurn, TranscriptSegment, Voice
from egodesk.memory.speech import write_transcript
from egodesk.memory.store import Store

WORD_S = 0.3
LINE_WORDS = 12
CLIP_S = 15.0


def build(store: Store, seconds: float, rng: np.random.Generator) -> tuple[int, list[Clip], list[dict]]:
    """The footage, its clips and turns stored; its lines (with word timings) returned, not yet written."""
    with store.session() as s:
        footage = Footage(content_hash="0" * 64, path="/x/talk.mp4", start_ts=0.0, duration=seconds)
        voices = [Voice(centroid=np.ones(256, np.float32).tobytes(), seconds=0.0, count=1) for _ in range(3)]
        s.add_all([footage, *voices])
        s.flush()
        clips = [
            Clip(footage_id=footage.id, idx=i, offset=i * CLIP_S, start_ts=i * CLIP_S, end_ts=(i + 1) * CLIP_S)
            for i in range(int(seconds // CLIP_S))
        ]
        s.add_all(clips)
        at, turn = 0.0, 0
        while at < seconds:
            length = float(rng.uniform(1.0, 6.0))
            s.add(SpeechTurn(footage_id=footage.id, voice_id=voices[turn % 3].id, start_ts=at, end_ts=at + length))
            at, turn = at + length, turn + 1
        s.flush()
        footage_id = footage.id
        s.expunge_all()
    lines = []
    for start in np.arange(0.0, seconds - LINE_WORDS * WORD_S, LINE_WORDS * WORD_S):
        words = [[f"w{i}", start + i * WORD_S, start + i * WORD_S + 0.25, 0.9] for i in range(LINE_WORDS)]
        lines.append({"start_ts": words[0][1], "end_ts": words[-1][2], "text": " ".join(w[0] for w in words), "words": words})
    return footage_id, clips, lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--repeat", type=int, default=5)
    add_output_args(parser)
    args = parser.parse_args(argv)
    minutes = 5.0 if args.quick else args.minutes
    report = Report("line cut")
    with tempfile.TemporaryDirectory(prefix="egodesk-linecut-") as scratch:
        store = Store(Path(scratch) / "library.sqlite")
        footage_id, clips, lines = build(store, minutes * 60.0, np.random.default_rng(0))
        plain = [{k: v for k, v in line.items() if k != "words"} for line in lines]

        def write(which: list[dict]) -> None:
            with store.session() as s:
                write_transcript(s, footage_id, clips, which)

        def again() -> None:
            with store.session() as s:
                attach_lines(s, footage_id)

        uncut_ms = median_ms(lambda: write(plain), args.repeat)
        cut_ms = median_ms(lambda: write(lines), args.repeat)
        again_ms = median_ms(again, args.repeat)
        with store.session() as s:
            after = s.scalar(select(func.count()).select_from(TranscriptSegment))
        store.close()
    per_hour = 60.0 / minutes
    note = f"{minutes:g} min, {len(lines)} lines written, {after} after the cut"
    report.add("transcript write with word timings (lines cut), per hour", cut_ms * per_hour, "ms", note=note)
    report.add("transcript write without word timings (nothing to cut), per hour", uncut_ms * per_hour, "ms", note=note)
    report.add("lines attached again once cut, per hour", again_ms * per_hour, "ms", note=note)
    report.finish(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
