"""The two test days (benchmarks/testday): the clean day and the real day (normal speaking rates, rooms,
phones, noise, poor pictures). Their questions agree with their plans, the answer judge reads answers
fairly, the generated files are real, dated and reproducible, the realism is what it says (speaking
rates, signal-to-noise ratios), the word error rate is counted right; and (slow) each whole day through
import -> memories -> ask holds its floors."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from benchmarks.testday import hearing, realism
from benchmarks.testday import make_day as day
from benchmarks.testday import real_day as real
from benchmarks.testday.judge import is_right, normalize
from benchmarks.testday.questions import interleaved, load_questions
from egodesk.core.timeutil import to_ts, utc_to_local_ts
from egodesk.eval.benchmark import BenchmarkError
from egodesk.media.probe import probe
from egodesk.media.starttime import recording_start, start_from_name

REPO = Path(__file__).resolve().parents[2]
CLASSES = {"where", "visual", "written", "said", "with", "after", "clock", "day", "count", "unanswerable", "people"}


DAYS = pytest.mark.parametrize(
    ("plan", "questions_file", "at_least"), [(day.DAY, day.QUESTIONS, 30), (real.REAL_DAY, real.QUESTIONS, 40)]
)


@DAYS
def test_questions_cover_every_class_and_are_enough(plan, questions_file, at_least):
    questions = load_questions(questions_file)
    categories = {q.bench.category for q in questions}
    assert len(questions) >= at_least
    assert categories == CLASSES
    assert sum(q.bench.unanswerable for q in questions) >= 4
    assert all(q.bench.unanswerable == (q.bench.category == "unanswerable") for q in questions)


@DAYS
def test_every_evidence_moment_lies_inside_its_recording_and_before_the_question(plan, questions_file, at_least):
    spans = {r.name: (to_ts(r.start), to_ts(r.end)) for r in plan}
    for q in load_questions(questions_file):
        for moment in q.bench.evidence:
            start, end = spans[moment.source]
            assert start <= moment.start < moment.end <= end, (q.bench.id, moment)
            assert moment.end <= q.bench.asked_at, q.bench.id


def test_the_real_day_is_spoken_and_filmed_as_life_is():
    """People at their own rates (no slowed voices, no added gaps), through rooms, streets and phones,
    over noise at 5-20 dB, sometimes over each other; pictures dark, blurred or half in view."""
    scenes = [scene for recording in real.REAL_DAY for scene in recording.scenes]
    voices = {voice for scene in scenes for _, voice, _ in scene.speech}
    assert all(isinstance(v, day.Voice) and v.rate >= 175 and "-g" not in v.args() for v in voices)
    assert {v.room for v in voices} == set(realism.ROOMS)
    assert {s.noise for s in scenes} == set(realism.NOISES[1:]) and all(5 <= s.snr_db <= 20 for s in scenes)
    assert {s.look for s in scenes} >= {real.DARK, real.BLURRED, real.HALF}
    lines = day.script(real.REAL_DAY)
    assert any(a.end > b.start for a, b in zip(lines, lines[1:]) if a.recording == b.recording), "no overlapping talk"
    assert len({r.start.date() for r in real.REAL_DAY}) == 2 and len(real.REAL_DAY) >= 8


def test_every_voice_of_the_days_is_its_own():
    """Each person (and each café voice) sounds unlike every other: espeak-ng silently drops a variant it
    cannot attach ("en-gb+f4" speaks plain "en-gb"), which once gave three people the wearer's voice."""
    clean = {day.WEARER, day.MARIA, day.TOM, day.PRIYA, day.BARISTA}
    people = {voice.espeak for r in real.REAL_DAY for scene in r.scenes for _, voice, _ in scene.speech}
    voices = sorted(clean | people | set(day.BABBLE_VOICES))
    sounds = {
        subprocess.run(["espeak-ng", "-v", v, "--stdout", "It is me."], check=True, capture_output=True).stdout for v in voices
    }
    assert len(sounds) == len(voices)


def test_noise_is_mixed_at_the_asked_signal_to_noise_ratio():
    rng = np.random.default_rng(0)
    speech = np.zeros(day.RATE * 2, np.float32)
    speech[: day.RATE] = 0.3 * np.sin(np.linspace(0, 2000, day.RATE))  # a second of "speech", a second of pause
    for kind in ("office", "kitchen", "cafe"):
        noise = realism.background(kind, len(speech), 1, rng.normal(0, 1, 5000), rng.normal(0, 1, 5000))
        mixed = realism.mix_at_snr(noise, realism.speech_level(speech), 10)
        snr = 20 * np.log10(realism.speech_level(speech) / np.sqrt(np.mean(mixed**2)))
        assert snr == pytest.approx(10, abs=0.01), kind


def test_word_errors_and_what_was_not_heard():
    assert hearing.word_errors("the vet appointment is on thursday".split(), "the meta pointment is on thursday".split()) == 2
    assert hearing.word_errors([], ["uh"]) == 1
    line = day.Line("r", "Sam", "room", "kitchen", 12.0, 100.0, 104.0, "The vet appointment is on Thursday at four.")
    heard = [
        hearing.HeardWord(w, 100.0 + n * 0.5, 100.4 + n * 0.5, 0.9)
        for n, w in enumerate("the meta pointment is on Thursday at 4".split())
    ]
    assert hearing.wer_by([line], heard)["all"]["all"].errors == 2  # "4" is "four": no error
    assert hearing.unheard(["vet", "appointment", "thursday", "helmet"], [line], heard, [(99.0, 105.0)]) == ["vet", "appointment"]


def test_interleaved_questions_cover_every_class_first():
    questions = interleaved(load_questions())
    assert {q.bench.category for q in questions[: len(CLASSES)]} == CLASSES
    assert sorted(q.bench.id for q in questions) == sorted(q.bench.id for q in load_questions())


def test_the_day_spans_two_calendar_days_with_at_least_eight_files():
    assert len(day.DAY) >= 8
    assert {r.start.date() for r in day.DAY} == {datetime(2026, 11, 17).date(), datetime(2026, 11, 18).date()}
    assert len({r.name for r in day.DAY}) == len(day.DAY)


def test_the_importer_reads_each_start_time_as_planned():
    for recording in day.DAY:
        if recording.dated_by == "filename":
            assert start_from_name(day.file_name(recording), datetime(2026, 12, 1)) == recording.start
        else:  # a GoPro counter name: no time in it, the container's UTC creation_time dates it
            assert start_from_name(day.file_name(recording), datetime(2026, 12, 1)) is None
            written = datetime.fromisoformat(day.creation_time(recording).replace("Z", "+00:00"))
            assert utc_to_local_ts(written) == to_ts(recording.start)


def test_a_bad_questions_file_is_refused_with_its_line(tmp_path):
    row = json.loads(day.QUESTIONS.read_text(encoding="utf-8").splitlines()[0])
    path = tmp_path / "questions.jsonl"
    path.write_text(json.dumps(row) + "\n" + json.dumps({**row, "id": "x2", "accept": []}) + "\n", encoding="utf-8")
    with pytest.raises(BenchmarkError, match=r"questions.jsonl:2: an answerable question needs"):
        load_questions(path)
    path.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(BenchmarkError, match=r":2: id td01 repeats"):
        load_questions(path)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("The next bus was at 08:24.", ["the", "next", "bus", "was", "at", "8:24"]),
        ("At 08:24:30 on Tue", ["at", "8:24", "on", "tue"]),
        ("forty-two and twelve thousand euros", ["42", "and", "12000", "euros"]),
        ("one hundred and eighty degrees, twice", ["180", "degrees", "2"]),
        ("nineteen sixty nine", ["19", "69"]),
        ("R00M214 / FRIDAY9:30", ["r", "00", "m", "214", "friday", "9:30"]),
        ("It costs 3.50, or 12,000 in total. Café!", ["it", "costs", "3.50", "or", "12000", "in", "total", "cafe"]),
    ],
)
def test_normalize(text, words):
    assert normalize(text) == words


@pytest.mark.parametrize(
    ("answer", "accept", "right"),
    [
        ("I saw it twice.", ["2"], True),
        ("You had coffee two times.", ["2"], True),
        ("Twelve times.", ["2"], False),  # a number inside another is no match
        ("The budget is twelve thousand euros.", ["12000"], True),
        ("The whiteboard said ROOM 214", ["214"], True),
        ("It said R00M214.", ["214"], True),  # what the OCR writes
        ("At 8:24 in the morning", ["8:24"], True),
        ("At 8:42", ["8:24"], False),
        ("This season was great", ["son"], False),
        ("Priya and Tom were there", [["priya", "tom"]], True),
        ("Priya was there", [["priya", "tom"]], False),
        ("They are in the kitchen drawer.", ["shelf"], False),
    ],
)
def test_judge(answer, accept, right):
    assert is_right(answer, accept) is right


def _probe_streams(path: Path) -> dict:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,codec_type", "-of", "json", str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return {s["codec_type"]: s["codec_name"] for s in json.loads(out)["streams"]}


def test_a_recording_is_real_h264_aac_reproducible_and_dated(tmp_path, monkeypatch):
    """A short recording built from the same parts as the day (walk, photo, board, two voices)."""
    short = (
        day.Scene(2, day.Walk(1.0, sign=("MAPLE STREET",)), ((0.2, day.TOM, "Hi."),)),
        day.Scene(2, day.Photo("chelsea")),
        day.Scene(2, day.Board(("BUS 42",)), ((0.1, day.MARIA, "Bus."),)),
    )
    plan = (replace(day.DAY[0], scenes=short), replace(day.DAY[3], scenes=short[:1]))
    monkeypatch.setattr(day, "DAY", plan)
    first = day.make_day(tmp_path / "a", log=lambda line: None)
    second = day.make_day(tmp_path / "b", log=lambda line: None)
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]  # same bytes: fixed seeds, bit-exact
    stamp = first[0].stat().st_mtime_ns
    assert day.make_day(tmp_path / "a", log=lambda line: pytest.fail(line)) == first  # idempotent
    assert first[0].stat().st_mtime_ns == stamp
    for path, recording in zip(first, plan):
        info = probe(path)
        assert _probe_streams(path) == {"video": "h264", "audio": "aac"}
        assert info.duration == pytest.approx(recording.seconds, abs=0.1)
        assert recording_start(path, info) == (
            to_ts(recording.start),
            "metadata" if recording.dated_by == "metadata" else "filename",
        )


def test_a_cached_day_library_is_keyed_by_the_code_that_builds_it(monkeypatch, tmp_path):
    """A library cached by other import code is built again; a change to the ask path alone keeps it."""
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import test_day

    for name in ("egodesk/memory/atomic.py", "egodesk/pipeline/ask.py", "resources/prompts/atomic_system.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("v1", encoding="utf-8")
    monkeypatch.setattr(test_day, "REPO", tmp_path)
    settings = test_day.library_settings("llm-quality", True)
    key = test_day.library_key("files", settings)
    (tmp_path / "egodesk/pipeline/ask.py").write_text("v2", encoding="utf-8")
    assert test_day.library_key("files", settings) == key
    for name in ("egodesk/memory/atomic.py", "resources/prompts/atomic_system.txt"):
        (tmp_path / name).write_text("v2", encoding="utf-8")
        assert test_day.library_key("files", settings) != key, name
        key = test_day.library_key("files", settings)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["clean", "real"])
def test_each_test_day_end_to_end_holds_its_floors(tmp_path, which):
    """The real app path on a whole day: generate (cached), import (cached library), speech recognition
    against the script, retrieval alone for hybrid and auto on every question, and 10 questions (one per
    class) asked with llm-quality. The LLM memories are off to fit the slow suite. Under a load of ~15 on
    2 cores the clean day's import took 9 minutes and an llm-quality answer several minutes: run it on idle
    cores."""
    report = tmp_path / "report.json"
    subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "test_day.py"),
            "--day",
            which,
            "--no-memories",
            "--limit",
            "10",
            "--strategies",
            "hybrid,auto",
            "--json",
            str(report),
        ],
        check=True,
        cwd=REPO,
        timeout=60 * 60,
    )
    data = json.loads(report.read_text(encoding="utf-8"))
    floors = FLOORS[which]
    ask = data["ask"]["summary"]
    assert ask["questions"] == 10 and ask["accuracy"] >= floors["right of 10"] / 10
    for strategy in ("hybrid", "auto"):
        for k in ("hit@1", "hit@5"):
            assert data["retrieval"][strategy]["summary"][k] >= floors[f"{strategy} {k}"], (strategy, k)
    wer = data["hearing"]["all"]["all"]["wer"]
    assert floors["wer"][0] <= wer <= floors["wer"][1], wer  # the clean day heard, the real day as hard as planned
    assert len(data["unheard"]) >= floors["questions with a key word unheard"]


# A little under what was measured, LLM memories off: the clean day on 2026-12-02 (all 43 questions, 38 with
# a moment: hybrid Hit@1 0.632, Hit@5 0.895; auto 0.658, 0.947) and 2026-12-06 (hybrid 0.711, 0.921; auto 0.789,
# 1.000; WER 0.114; 9 of these 10 questions right); the real day on
# 2026-12-06 (44 with a moment: hybrid 0.727, 0.886; auto 0.773, 0.977; WER 0.424, 20 of 49 questions with a
# key word unheard; with the LLM memories 4-5 of these 10 questions were answered right). Raise them as the
# days' figures improve. "wer" is the range the speech recogniser's word error rate must stay in.
# The clean day's answers, 2026-12-07 after lines were cut where their speaker changes: 7 of these 10 on an
# idle machine, 5 in a CI run of the same prompts (td14 "12, 000 euros" and td35 flip between runs), 35/54 on
# the whole day (37/54 before the cut: td01 and td04 lost; docs/benchmarks.md).
FLOORS = {
    "clean": {
        "hybrid hit@1": 0.55,
        "hybrid hit@5": 0.80,
        "auto hit@1": 0.55,
        "auto hit@5": 0.85,
        "right of 10": 5,
        "wer": (0.0, 0.2),
        "questions with a key word unheard": 0,
    },
    "real": {
        "hybrid hit@1": 0.65,
        "hybrid hit@5": 0.80,
        "auto hit@1": 0.70,
        "auto hit@5": 0.90,
        "right of 10": 2,
        "wer": (0.3, 0.55),
        "questions with a key word unheard": 10,
    },
}
