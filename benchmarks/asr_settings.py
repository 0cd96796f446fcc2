"""faster-whisper decoding settings on the real test day: word error rate against the day's script and
decoding speed, per setting.

    EGODESK_THREADS=2 .venv/bin/python benchmarks/asr_settings.py [--day real|clean] [--only a,c,...] [--json FILE]

The real day (testday/real_day.py) has people talking at their own rates, a room or a street away or on
the phone, over kitchen, street, café and office noise at 5-20 dB SNR. Every variant below transcribes
each of its recordings (audio read by the app's own `_load_audio`); the recognised words, placed on the
wall clock, are scored with testday/hearing.py: WER overall, per background noise and per room the voice
came through (near: the wearer; room, far, phone: the people they meet). RTF is wall seconds of decoding
per second of audio (`cpu` is the process's CPU seconds per audio second) on the settings' threads
(EGODESK_THREADS); `x(a)` is the RTF relative to the app's own setting measured in the same run.

Every variant but (h) is told the language (en), as the library's usual language (`asr.transcribe_as_usual`)
tells an unsure detection; (h) shows what detecting it on every recording costs. Variants:
  a  the app (egodesk/perception/asr.py): batched pipeline, beam 1, greedy, VAD, no conditioning
  b  (a) with beam 5
  c  sequential WhisperModel.transcribe, beam 5, temperature fallback 0.0-0.6, VAD, no conditioning
  d  (c) conditioned on the previous text (no effect while a recording's speech fits one 30 s window,
     as each of the real day's does once VAD has cut the silences)
  e  (a) with a more sensitive VAD for distant voices (threshold 0.35, pad 400 ms, min silence 500 ms;
     the batched pipeline's own: 0.5, 400 ms, 160 ms)
  f  (a) with hotwords: the words on the day's boards and signs and the names of the people who talk
  g  the lite model (asr-lite, tiny.en) with (a)'s setting
  h  (a) with the language detected, none given
"""

from __future__ import annotations

import argparse
import json
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from common import Figure
from testday import hearing
from testday.make_day import Board, Line, Photo, Recording, Walk, make_day, plan_of, script
from testday.realism import NOISES, ROOMS

from egodesk.core.manifest import locate
from egodesk.core.settings import Settings
from egodesk.core.timeutil import to_ts
from egodesk.perception.asr import SAMPLE_RATE, _load_audio

BENCHMARK = "asr-settings"
LANGUAGE = "en"
# The app's call (FasterWhisperTranscriber.transcribe); word timestamps are added to every variant.
APP = {"beam_size": 1, "batch_size": 8, "temperature": 0.0, "vad_filter": True, "condition_on_previous_text": False}
# Sequential decoding takes no batch size; VAD stays on so that every variant skips the same silences.
SEQUENTIAL = {"beam_size": 5, "temperature": (0.0, 0.2, 0.4, 0.6), "vad_filter": True, "condition_on_previous_text": False}
SENSITIVE_VAD = {"threshold": 0.35, "speech_pad_ms": 400, "min_silence_duration_ms": 500}
UNNAMED = {"wearer", "barista", "other"}  # voices a library would hold no name for
COLUMNS = ("quiet", *NOISES[1:], *ROOMS)


@dataclass(frozen=True)
class Variant:
    key: str
    label: str
    model: str  # manifest role
    batched: bool
    options: dict


@dataclass
class Run:
    variant: Variant
    words: list[hearing.HeardWord] = field(default_factory=list)
    wall_s: float = 0.0
    cpu_s: float = 0.0


def shown_text(picture: Board | Walk | Photo) -> tuple[str, ...]:
    if isinstance(picture, Board):
        return picture.lines
    return picture.sign if isinstance(picture, Walk) else ()


def vocabulary(plan: tuple[Recording, ...], lines: list[Line]) -> str:
    """What a library would already know before it hears a recording: the words read on its boards and
    signs (3+ letters, title-cased) and the names of the people heard."""
    shown = [text for recording in plan for scene in recording.scenes for text in shown_text(scene.picture)]
    words = [word.title() for text in shown for word in re.findall(r"[A-Za-z]{3,}", text)]
    names = [line.voice for line in lines if line.voice not in UNNAMED]
    return " ".join(dict.fromkeys(words + names))


def variants(hotwords: str) -> tuple[Variant, ...]:
    return (
        Variant("a", "app: batched, beam 1", "asr", True, APP),
        Variant("b", "batched, beam 5", "asr", True, APP | {"beam_size": 5}),
        Variant("c", "sequential, beam 5, fallback", "asr", False, SEQUENTIAL),
        Variant("d", "(c) + condition on previous", "asr", False, SEQUENTIAL | {"condition_on_previous_text": True}),
        Variant("e", "(a) + sensitive VAD", "asr", True, APP | {"vad_parameters": SENSITIVE_VAD}),
        Variant("f", "(a) + hotwords", "asr", True, APP | {"hotwords": hotwords}),
        Variant("g", "asr-lite tiny.en, (a)", "asr-lite", True, APP),
        Variant("h", "(a), language detected", "asr", True, APP | {"language": None}),
    )


def load_models(roles: set[str], threads: int) -> dict[str, tuple]:
    """Per manifest role: the model for sequential decoding and the batched pipeline around it."""
    from faster_whisper import BatchedInferencePipeline, WhisperModel

    models = {}
    for role in sorted(roles):
        model = WhisperModel(str(locate(role)), device="cpu", compute_type="int8", cpu_threads=threads, local_files_only=True)
        models[role] = (model, BatchedInferencePipeline(model))
    return models


def decode(engine, audio, options: dict, offset: float) -> list[hearing.HeardWord]:
    segments, _ = engine.transcribe(audio, word_timestamps=True, **({"language": LANGUAGE} | options))
    # Decoding is lazy: it happens while the segments are read.
    return [
        hearing.HeardWord(w.word.strip(), offset + w.start, offset + w.end, w.probability)
        for s in segments
        for w in s.words or ()
    ]


def column_of(line: Line) -> tuple[str, str]:
    return ("quiet" if line.snr_db is None else line.noise), line.room


def scores(lines: list[Line], words: list[hearing.HeardWord]) -> dict[str, hearing.Tally]:
    """WER over all lines and over the lines of each noise kind and each room (columns nobody spoke in are left out)."""
    subsets = {"all": lines} | {c: [line for line in lines if c in column_of(line)] for c in COLUMNS}
    return {name: hearing.wer_by(subset, words)["all"]["all"] for name, subset in subsets.items() if subset}


def table(runs: list[Run], tallies: dict[str, dict[str, hearing.Tally]], audio_s: float) -> str:
    base = runs[0].wall_s
    columns = list(tallies[runs[0].variant.key])
    header = [
        "variant",
        *(f"{c} ({tallies[runs[0].variant.key][c].words})" for c in columns),
        "RTF",
        f"x({runs[0].variant.key})",
        "cpu",
    ]
    rows = [
        [
            f"{run.variant.key} {run.variant.label}",
            *(f"{tallies[run.variant.key][c].wer:.3f}" for c in columns),
            f"{run.wall_s / audio_s:.3f}",
            f"{run.wall_s / base:.2f}",
            f"{run.cpu_s / audio_s:.3f}",
        ]
        for run in runs
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))) + " |"

    rule = "|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def figures(runs: list[Run], tallies: dict[str, dict[str, hearing.Tally]], audio_s: float) -> list[Figure]:
    out = []
    for run in runs:
        name = f"{run.variant.key} {run.variant.label}"
        out += [Figure(BENCHMARK, f"{name}: WER {c}", t.wer, "WER") for c, t in tallies[run.variant.key].items()]
        out.append(Figure(BENCHMARK, f"{name}: RTF", run.wall_s / audio_s, "x real time"))
        out.append(Figure(BENCHMARK, f"{name}: RTF vs ({runs[0].variant.key})", run.wall_s / runs[0].wall_s, "x"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated variant keys (default all; the first is the RTF baseline)")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument("--day", choices=("real", "clean"), default="real", help="which test day's recordings")
    args = parser.parse_args(argv)
    started = time.perf_counter()

    plan = plan_of(args.day)
    paths = make_day(plan=plan)
    lines = script(plan)
    hotwords = vocabulary(plan, lines)
    chosen = [v for v in variants(hotwords) if not args.only or v.key in args.only.split(",")]
    threads = Settings.load(None).threads
    models = load_models({v.model for v in chosen}, threads)
    audios = [(_load_audio(path), to_ts(recording.start)) for recording, path in zip(plan, paths)]
    audio_s = sum(len(audio) / SAMPLE_RATE for audio, _ in audios)
    print(
        f"{args.day} day: {len(audios)} recordings, {audio_s:.0f} s of audio, {len(lines)} lines; {threads} threads; language={LANGUAGE}"
    )
    print(f"hotwords (f): {hotwords}", flush=True)

    # Untimed first call per model: the VAD model and the first allocations are loaded once, not charged to one variant.
    for _, pipeline in models.values():
        decode(pipeline, audios[0][0][: 10 * SAMPLE_RATE], APP, 0.0)

    # The variants take turns per recording, so a job sharing the cores slows them all alike.
    runs = [Run(v) for v in chosen]
    for n, (audio, offset) in enumerate(audios, start=1):
        for run in runs:
            model, pipeline = models[run.variant.model]
            wall, cpu = time.perf_counter(), time.process_time()
            run.words += decode(pipeline if run.variant.batched else model, audio, run.variant.options, offset)
            run.wall_s += time.perf_counter() - wall
            run.cpu_s += time.process_time() - cpu
        print(f"  recording {n}/{len(audios)} done", flush=True)

    tallies = {run.variant.key: scores(lines, run.words) for run in runs}
    print(table(runs, tallies, audio_s))
    print("columns: WER per background noise / room the voice came through (words said); RTF: decoding wall s per audio s;")
    print("x(a): RTF relative to the first variant in this run; cpu: process CPU s per audio s")
    if args.json:
        report = {
            "seconds": round(time.perf_counter() - started, 2),
            "figures": [asdict(f) for f in figures(runs, tallies, audio_s)],
            "audio_s": round(audio_s, 2),
            "threads": threads,
            "language": LANGUAGE,
            "hotwords": hotwords,
            "variants": {
                run.variant.key: {
                    "label": run.variant.label,
                    "model": run.variant.model,
                    "batched": run.variant.batched,
                    "options": run.variant.options,
                    "wer": {c: vars(t) | {"wer": round(t.wer, 4)} for c, t in tallies[run.variant.key].items()},
                    "rtf": round(run.wall_s / audio_s, 4),
                    "rtf_vs_a": round(run.wall_s / runs[0].wall_s, 3),
                    "cpu_rtf": round(run.cpu_s / audio_s, 4),
                    "words_heard": len(run.words),
                    "mean_probability": round(sum(w.probability for w in run.words) / max(1, len(run.words)), 4),
                }
                for run in runs
            },
        }
        Path(args.json).write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
