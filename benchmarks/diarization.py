"""Who spoke when, on both test days: diarization error rate, cross-footage identity accuracy, the wearer
found, and the cost as a real-time factor, per voice embedding engine.

Ground truth is each day's script (testday/speakers.py). Each recording's audio is decoded to 16 kHz
once (the ingest's audio stage already does this, so decoding is not counted); the timed part is what a
diarization stage would add: speech regions (Silero VAD), window embeddings, clustering and the
library match. Recordings are diarized newest first, the order in which the library's job queue runs
each footage's speakers stage (`pipeline/jobs.next_job`); `--order time` runs them oldest first. After
each one the library's voices are grouped as the app groups them (`diarize.regroup`, which
`memory.people.regroup` runs at every speakers stage): the greedy match replayed over every footage's
clusters in the order recorded, so both orders end with the same voices. (Matched incrementally in the
order they arrive, the clean day's wearer and Tom became one voice newest first: a voice first heard
alone gathers another voice like it before the footage where both speak separates them.)

Engines:
- `resemblyzer`: the GE2E voice encoder of the `resemblyzer` wheel as ONNX (the model `egodesk models
  install` puts in place as role `voice`);
- `mfcc`: no model: the mean and spread of 19 mel cepstral coefficients per window, the classic
  speaker feature, to show what the learned encoder is worth over it.

DER is scored per recording with a 0.25 s collar, overlaps included (egodesk/eval/diarization.py).
Identity accuracy maps library voices to people once for the whole day. `--sweep` prints the DER over
clustering thresholds (the defaults were calibrated on the clean day; the real day judges them).

Lines, as the library labels them (`memory.line_voices.attach_lines`: a line gets the voice its turns overlap
longest): the share of the script's lines whose voice maps to the person who said it, and how far the
"me" label can be trusted (precision and recall of the wearer's lines), since that label is written into
the memories the answers read.

    EGODESK_THREADS=2 .venv/bin/python benchmarks/diarization.py [--day clean,real] [--engine resemblyzer,mfcc]
        [--sweep] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass

import numpy as np
from common import Report, add_output_args
from testday.make_day import make_day, plan_of
from testday.speakers import WEARER, speakers_of, turns_of

from egodesk.core.manifest import locate
from egodesk.eval.diarization import identity_accuracy, total_der
from egodesk.perception import diarize as dz

RTF_TARGET = 0.1
DER_TARGET = 0.20
LIBRARY_SIMILARITY = {"resemblyzer": dz.LIBRARY_SIMILARITY, "mfcc": 0.9}
CLUSTER_DISTANCE = {"resemblyzer": dz.CLUSTER_DISTANCE, "mfcc": 0.05}


class MfccVoice:
    """Mean and standard deviation of cepstral coefficients 1..19 of the log mel spectrogram."""

    def embed(self, pieces) -> np.ndarray:
        from scipy.fft import dct

        out = []
        for piece in pieces:
            ceps = dct(np.log(dz.mel_power(dz.at_level(piece)) + 1e-6), type=2, norm="ortho", axis=1)[:, 1:20]
            out.append(np.concatenate([ceps.mean(axis=0), ceps.std(axis=0)]))
        return np.asarray(out, np.float32)


def encoder(engine: str, threads: int):
    if engine == "resemblyzer":
        return dz.VoiceEncoder(locate("voice"), threads=threads)
    if engine == "mfcc":
        return MfccVoice()
    raise ValueError(f"unknown engine {engine!r}")


def decode(path) -> np.ndarray:
    from faster_whisper import decode_audio

    return decode_audio(str(path), sampling_rate=dz.SAMPLE_RATE)


@dataclass
class DayResult:
    der: float
    missed: float
    false_alarm: float
    confusion: float
    identity: float
    voices: int
    people: int
    wearer_ok: bool
    rtf: float
    lines_right: float  # share of script lines whose longest-overlapping voice maps to their speaker
    me_precision: float  # of the lines labelled "me", the share the wearer said
    me_recall: float  # of the wearer's lines, the share labelled "me"


def line_voices(truth: list, turns: list[tuple[str, float, float]]) -> list[str | None]:
    """Each true line's voice as the library would label it: the one whose turns overlap it longest."""
    out = []
    for line in truth:
        heard: dict[str, float] = {}
        for voice, start, end in turns:
            overlap = min(end, line.end) - max(start, line.start)
            if overlap > 0:
                heard[voice] = heard.get(voice, 0.0) + overlap
        out.append(max(heard, key=lambda v: heard[v]) if heard else None)
    return out


def run_day(
    day: str, engine: str, threads: int, distance: float | None = None, similarity: float | None = None, newest_first: bool = True
):
    plan = tuple(sorted(plan_of(day), key=lambda r: r.start, reverse=newest_first))
    truth = turns_of(plan)
    paths = {p.stem: p for p in make_day(plan=plan_of(day), log=lambda *_: None)}
    audio = {r.name: decode(paths[r.name]) for r in plan}
    diarizer = dz.Diarizer(encoder(engine, threads), CLUSTER_DISTANCE[engine] if distance is None else distance)
    book = dz.VoiceBook(LIBRARY_SIMILARITY[engine] if similarity is None else similarity)
    start_of = {r.name: r.start for r in plan}
    local, heard = {}, {}
    started = time.perf_counter()
    for recording in plan:
        heard[recording.name] = result = diarizer.diarize(audio[recording.name])
        local[recording.name] = [(f"c{t.label}", t.start, t.end) for t in result.turns]
        recorded = sorted(heard, key=lambda name: start_of[name])  # the library regroups at each footage
        book, found = dz.regroup([(name, heard[name].clusters) for name in recorded], similarity=book.similarity)
    seconds = time.perf_counter() - started
    library = {name: [(f"v{found[name][t.label]}", t.start, t.end) for t in result.turns] for name, result in heard.items()}
    reference = {name: [(t.speaker, t.start, t.end) for t in turns] for name, turns in truth.items()}
    parts = total_der((reference[name], local[name]) for name in reference)
    identity, mapping = identity_accuracy(reference, library)
    wearer = book.wearer()
    me = f"v{wearer}" if wearer is not None else None
    said = [(line.speaker, voice) for name in truth for line, voice in zip(truth[name], line_voices(truth[name], library[name]))]
    labelled_me = [speaker for speaker, voice in said if voice is not None and voice == me]
    wearer_lines = [voice for speaker, voice in said if speaker == WEARER]
    duration = sum(len(a) for a in audio.values()) / dz.SAMPLE_RATE
    return DayResult(
        parts.der,
        parts.missed / parts.scored,
        parts.false_alarm / parts.scored,
        parts.confusion / parts.scored,
        identity,
        len(book.voices),
        len(speakers_of(truth)),
        wearer is not None and mapping.get(f"v{wearer}") == WEARER,
        seconds / duration,
        sum(1 for speaker, voice in said if voice is not None and mapping.get(voice) == speaker) / max(1, len(said)),
        sum(1 for speaker in labelled_me if speaker == WEARER) / max(1, len(labelled_me)),
        sum(1 for voice in wearer_lines if voice is not None and voice == me) / max(1, len(wearer_lines)),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--day", default="clean,real")
    parser.add_argument("--engine", default="resemblyzer,mfcc")
    parser.add_argument("--sweep", action="store_true", help="DER and identity accuracy over clustering thresholds")
    parser.add_argument("--order", choices=("newest", "time"), default="newest", help="the order footage joins the library")
    add_output_args(parser)
    args = parser.parse_args(argv)
    threads = int(os.environ.get("EGODESK_THREADS", "2"))
    days, engines = args.day.split(","), args.engine.split(",")
    newest = args.order == "newest"
    report = Report("diarization")
    rows = []
    for engine in engines:
        for day in days:
            if args.sweep:
                base = CLUSTER_DISTANCE[engine]
                for distance in (base * f for f in (0.5, 0.67, 0.83, 1.0, 1.17, 1.33, 1.67)):
                    r = run_day(day, engine, threads, distance=distance, newest_first=newest)
                    print(f"sweep {engine} {day} distance {distance:.3f}: DER {r.der:.3f} identity {r.identity:.3f}", flush=True)
                base = LIBRARY_SIMILARITY[engine]
                for similarity in (base - 0.1, base - 0.05, base, base + 0.05, min(0.99, base + 0.1)):
                    r = run_day(day, engine, threads, similarity=similarity, newest_first=newest)
                    print(f"sweep {engine} {day} similarity {similarity:.2f}: identity {r.identity:.3f} voices {r.voices}")
            r = run_day(day, engine, threads, newest_first=newest)
            rows.append((engine, day, r))
            print(f"{engine} {day}: {r}", flush=True)
            report.add(f"{engine} {day} DER", r.der * 100, "%", note="0.25 s collar, overlaps scored")
            report.add(f"{engine} {day} identity accuracy", r.identity * 100, "%")
            report.add(f"{engine} {day} RTF ({threads} threads)", r.rtf, "x")
            report.add(f"{engine} {day} lines with their speaker's voice", r.lines_right * 100, "%")
            report.add(f"{engine} {day} 'me' label precision", r.me_precision * 100, "%")
            report.add(f"{engine} {day} 'me' label recall", r.me_recall * 100, "%")
    print()
    print(
        f"| engine | day | DER | missed | false alarm | confusion | identity acc. | voices / people | wearer = me |"
        f" lines right | 'me' precision / recall | RTF ({threads} thr) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for engine, day, r in rows:
        print(
            f"| {engine} | {day} | {r.der:.1%} | {r.missed:.1%} | {r.false_alarm:.1%} | {r.confusion:.1%} | {r.identity:.1%} |"
            f" {r.voices} / {r.people} | {'yes' if r.wearer_ok else 'no'} | {r.lines_right:.1%} |"
            f" {r.me_precision:.1%} / {r.me_recall:.1%} | {r.rtf:.4f} |"
        )
    print(f"targets: DER <= {DER_TARGET:.0%} on the clean day, RTF <= {RTF_TARGET} on 2 cores\n")
    report.finish(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
