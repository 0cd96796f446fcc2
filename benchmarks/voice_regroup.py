"""What the library's regrouping of voices (`memory.people.regroup`, run at every footage's speakers stage)
costs on a large library: a synthetic one of `--footage` recordings (2400: 200 hours of 5-minute clips),
each with `--per` voice clusters drawn from `--people` people (a person's clusters at cosine ~0.95 to their
voice, different people ~0.0 apart), stored as the speakers stage stores them (appearances and turns).

Timed, median of `--repeat`: the speakers stage's write of one more footage (`people.store_footage`: its
turns and appearances, the regroup over every stored cluster, the wearer and the lines), the regroup alone
when nothing moves, and the replay itself (`diarize.regroup`, no database). Only stored centroids are
read: no audio.

    .venv/bin/python benchmarks/voice_regroup.py [--footage 2400] [--people 200] [--per 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from common import Report, add_output_args, median_ms
from sqlalchemy import func, select

from egodesk.memory import people
from egodesk.memory.schema import Footage, SpeechTurn, Voice, VoiceAppearance
from egodesk.memory.store import Store
from egodesk.perception import diarize as dz

CLIP_S = 300.0


def _clusters(rng: np.random.Generator, prints: np.ndarray, per: int) -> list[dz.VoiceCluster]:
    """`per` clusters of distinct people: each their print plus noise (cosine ~0.95 to it)."""
    who = rng.choice(len(prints), size=per, replace=False)
    noisy = prints[who] + rng.normal(0.0, 0.02, (per, prints.shape[1]))
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    return [dz.VoiceCluster(i, noisy[i].astype(np.float32), 60.0, -30.0) for i in range(per)]


def _diarization(clusters: list[dz.VoiceCluster]) -> dz.Diarization:
    turns = [dz.SpeechTurn(20.0 * c.label, 20.0 * c.label + 15.0, c.label, -30.0) for c in clusters]
    return dz.Diarization(turns, clusters)


def build(store: Store, rng: np.random.Generator, prints: np.ndarray, footage: int, per: int) -> None:
    """The library as built footage by footage in the order recorded, written at once (the replay's groups)."""
    names = [str(i) for i in range(footage)]
    heard = {name: _clusters(rng, prints, per) for name in names}
    book, found = dz.regroup([(name, heard[name]) for name in names])
    with store.session() as s:
        rows = [
            Footage(content_hash=f"{i:064d}", path=f"/x/{i}.mp4", start_ts=i * CLIP_S, duration=CLIP_S) for i in range(footage)
        ]
        voices = [Voice(centroid=v.centroid.astype(np.float32).tobytes(), seconds=0.0, count=0) for v in book.voices]
        s.add_all(rows + voices)
        s.flush()
        for row, name in zip(rows, names):
            for c in heard[name]:
                voice = voices[found[name][c.label]].id
                s.add(
                    VoiceAppearance(
                        voice_id=voice, footage_id=row.id, centroid=c.centroid.tobytes(), seconds=60.0, level_db=-30.0
                    )
                )
                s.add(
                    SpeechTurn(
                        footage_id=row.id,
                        voice_id=voice,
                        start_ts=row.start_ts + 20.0 * c.label,
                        end_ts=row.start_ts + 20.0 * c.label + 15.0,
                        level_db=-30.0,
                    )
                )
        s.flush()
        people._refresh(s, {v.id for v in voices})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--footage", type=int, default=2400)
    parser.add_argument("--people", type=int, default=200)
    parser.add_argument("--per", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    add_output_args(parser)
    args = parser.parse_args(argv)
    footage = 200 if args.quick else args.footage
    rng = np.random.default_rng(0)
    prints = rng.normal(size=(args.people, 256))
    prints /= np.linalg.norm(prints, axis=1, keepdims=True)
    report = Report("voice regroup")
    with tempfile.TemporaryDirectory(prefix="egodesk-regroup-") as scratch:
        store = Store(Path(scratch) / "library.sqlite")
        build(store, rng, prints, footage, args.per)
        with store.session() as s:
            last = s.scalar(select(func.max(Footage.id)))
            clusters = s.scalar(select(func.count()).select_from(VoiceAppearance))
            voices = s.scalar(select(func.count()).select_from(Voice))
        again = _diarization(_clusters(rng, prints, args.per))

        def stage() -> None:
            with store.session() as s:
                people.store_footage(s, last, again)

        def alone() -> None:
            with store.session() as s:
                assert people.regroup(s) == set()

        stage()  # the footage's first run may move a few clusters; then every rerun finds the same voices
        stage_ms, regroup_ms = median_ms(stage, args.repeat), median_ms(alone, args.repeat)
        heard = [(str(i), _clusters(rng, prints, args.per)) for i in range(footage)]
        replay_ms = median_ms(lambda: dz.regroup(heard), args.repeat)
        store.close()
    note = f"{footage} footage, {clusters} clusters, {voices} voices"
    report.add("speakers stage write of one footage (with the regroup)", stage_ms, "ms", note=note)
    report.add("regroup alone, nothing moved", regroup_ms, "ms", note=note)
    report.add("replay alone (diarize.regroup, no database)", replay_ms, "ms", note=note)
    report.finish(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
