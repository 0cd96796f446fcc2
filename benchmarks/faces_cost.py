"""What the `faces` stage costs a keyframe: the walk footage (../shared/media, 848x480, 10.5 s, no people)
indexed in a scratch library (tag-based captions, the small embedder, no LLM memories), then the stage's
parts timed on its keyframes: decoding them again, the HOG detector (and the embedding of any face
found), and the whole stage with its transaction; the models' loading once. CPU time
(`time.process_time`) and wall time, each the median of `--repeat` runs, since the machine is shared.

    .venv/bin/python benchmarks/faces_cost.py [--video PATH] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WALK = REPO.parent / "shared" / "media" / "gopro_max-heromode.mp4"


def _timed(work) -> tuple[float, float, object]:
    cpu, wall = time.process_time(), time.perf_counter()
    result = work()
    return time.process_time() - cpu, time.perf_counter() - wall, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--video", type=Path, default=WALK)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from egodesk.pipeline import faces as stage
    from egodesk.pipeline.engines import Engines
    from egodesk.pipeline.library import Library
    from egodesk.pipeline.stages import StageContext

    root = Path(tempfile.mkdtemp(prefix="faces-cost-"))
    try:
        (root / "media").mkdir()
        video = root / "media" / args.video.name
        shutil.copy(args.video, video)
        library = Library(root / "lib")
        update = {"threads": 1, "embedder_model": "embedder", "memory_records": False, "memory_atomic": False}
        library.save_settings(library.settings.model_copy(update={**update, "asr_model": "asr-lite"}))
        library.add([video])
        library.process()
        [footage] = library.footage()
        engines = Engines(library.settings, library.paths, library.store)
        load_cpu, load_wall, finder = _timed(lambda: engines.face_finder)
        ctx = StageContext(library.store, engines, footage.id, lambda _p: None, lambda: False)
        wanted = stage._keyframes(ctx)
        rows: dict[str, list[tuple[float, float]]] = {"decode": [], "detect": [], "stage": []}
        found = 0
        for _ in range(args.repeat):
            cpu, wall, pictures = _timed(lambda: list(stage._pictures(ctx, wanted)))
            rows["decode"].append((cpu, wall))
            cpu, wall, faces = _timed(lambda: [finder.find(rgb) for _, _, rgb in pictures])  # noqa: B023
            rows["detect"].append((cpu, wall))
            found = sum(len(f) for f in faces)
            cpu, wall, _ = _timed(lambda: stage.run_faces(ctx))
            rows["stage"].append((cpu, wall))
        library.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    n = len(wanted)
    print(
        f"{args.video.name}: {n} keyframes, {found} faces found; models loaded in {load_cpu:.2f} s CPU ({load_wall:.2f} s wall)"
    )
    for name, runs in rows.items():
        cpu = statistics.median(c for c, _ in runs) / n * 1000
        wall = statistics.median(w for _, w in runs) / n * 1000
        print(f"  {name:<7} {cpu:6.1f} ms CPU  {wall:6.1f} ms wall  a keyframe")


if __name__ == "__main__":
    main()
