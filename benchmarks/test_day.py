"""The two-day test library end to end: generated camera files -> import -> memories -> ask, judged.

    .venv/bin/python benchmarks/test_day.py [--day clean|real] [--llm llm-quality|llm-fast|llm-test]
        [--strategy auto] [--strategies flat,hybrid,...] [--limit N] [--no-memories] [--rebuild] [--json REPORT]

Two days: `clean` (slowed voices in quiet rooms: recognition hears every word) and `real` (people at
their own rates, across rooms and streets, on the phone, over kitchen, street and café noise; pictures
dark, blurred or half in view: testday/real_day.py). Report every figure for both.

1. Writes the test day's video files if missing (benchmarks/testday/make_day.py).
2. Imports them into a fresh library through `Library.import_paths` (speech, keyframes and tags, OCR,
   captions, parent-child and visual memory, and the LLM memories unless --no-memories). The library is
   cached under ~/.cache/egodesk/bench/ by the files' digest and the settings: a rerun skips the import.
3. Asks every question with `Library.ask` at its `asked_at` (the app's one ask path) and judges the
   answer (testday/judge.py); prints per category: answers right, the annotated moment among the first
   3 / 5 evidence chips (chips@3, chips@5), whether a cited unit is that moment (cite_ok), abstention
   recall / precision on the unanswerable questions, and the whole ask's latency p50 / p95.
   Before asking, prints the speech recogniser's word error rate against the day's script, per voice
   and per noise level (testday/hearing.py), and how many questions' key words it did not hear; with
   --named, how many recognised words carry the label of the person who said them (testday/speakers.py).
4. Runs every question through each retrieval strategy alone (egodesk.eval.runner.run_questions, as
   `egodesk eval` and benchmarks/strategy_table.py do): Hit@1 / Hit@5 overall and Hit@5 per category.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import time
from pathlib import Path

from common import REPO, cache_dir
from sqlalchemy import select
from testday import hearing
from testday.judge import is_right
from testday.make_day import DAY, default_out, files_digest, make_day, plan_of, script
from testday.naming import name_voices
from testday.questions import QUESTIONS, DayQuestion, interleaved, load_questions
from testday.real_day import QUESTIONS as REAL_QUESTIONS
from testday.speakers import words_with_their_speaker

from egodesk.core.settings import Settings
from egodesk.core.stages import LLM_STAGES
from egodesk.core.types import Progress
from egodesk.eval.metrics import QuestionResult, by_category, hit_at_k, overlaps, percentile, summarize
from egodesk.eval.runner import format_value, run_questions, write_report
from egodesk.memory.schema import TranscriptSegment
from egodesk.pipeline.library import Library

DEFAULT_STRATEGIES = "flat,subchunk,parent,parent-time,hybrid,context,timeaware,carve,records,auto"
ASK_COLUMNS = (
    "accuracy",
    "chips@3",
    "chips@5",
    "cite_ok",
    "abstention_recall",
    "abstention_precision",
    "grounded",
    "answer_p50_ms",
    "answer_p95_ms",
    "first_words_p50_ms",
    "false_refusals",
)


def library_settings(llm: str, memories: bool) -> Settings:
    settings = Settings.load(None)  # defaults and EGODESK_* overrides (EGODESK_THREADS, ...)
    return settings.model_copy(update={"llm_model": llm, "memory_records": memories, "memory_atomic": memories})


# The code and prompts an import runs (the ask path's own modules aside): a library cached by other code
# is not what this code builds. One cached before a change to the memory builders scored 36/43 where the
# same answering code scored 34/43 on the library it builds itself.
BUILD_CODE = (
    "egodesk/media",
    "egodesk/perception",
    "egodesk/memory",
    "egodesk/pipeline",
    "resources/prompts",
    "models/manifest.toml",
)
ASK_CODE = {"egodesk/pipeline/ask.py", "egodesk/pipeline/asking.py", "egodesk/memory/queries.py"}


def build_code_digest() -> str:
    digest = hashlib.sha256()
    for top in BUILD_CODE:
        for path in sorted((REPO / top).rglob("*")) if (REPO / top).is_dir() else [REPO / top]:
            name = path.relative_to(REPO).as_posix()
            if path.is_file() and path.suffix in (".py", ".txt", ".toml") and name not in ASK_CODE:
                digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def library_key(digest: str, settings: Settings) -> str:
    """The files, the import's code (`build_code_digest`) and every setting that shapes what the import
    builds: not the answering ones, not the thread count, and not the LLM when no LLM memories are built."""
    unused = set(Settings.groups()["Answers"]) | {"threads"}
    if not (settings.memory_records or settings.memory_atomic):
        unused |= {"llm_model", "llm_backend", "llm_model_path"}
    shaping = {k: v for k, v in settings.model_dump().items() if k not in unused}
    return hashlib.sha256((digest + build_code_digest() + json.dumps(shaping, sort_keys=True)).encode()).hexdigest()[:16]


def built_library(
    paths: list[Path], settings: Settings, rebuild: bool = False, log=print
) -> tuple[Library, float, dict[str, float]]:
    """The imported test day (cached); returns it, the seconds the import took now and the seconds each
    stage took now, over all footage (from each stage's start and end events)."""
    root = cache_dir("testday", key=library_key(files_digest(paths), settings))
    if rebuild and root.exists():
        shutil.rmtree(root)
    library = Library(root)
    library.save_settings(settings)
    library.mark_cancelled()  # a run killed mid-import left jobs "running": continue them
    library.resume()

    stage_s: dict[str, float] = {}
    began: dict[tuple, float] = {}

    def progress(p: Progress) -> None:
        if p.message == "started":
            began[(p.footage_id, p.stage)] = time.perf_counter()
        elif p.message:  # each stage's end (done or failed) of each footage
            log(f"  [{time.strftime('%H:%M:%S')}] footage {p.footage_id}: {p.stage} {p.message}")
            if (p.footage_id, p.stage) in began:
                stage_s[p.stage] = stage_s.get(p.stage, 0.0) + time.perf_counter() - began.pop((p.footage_id, p.stage))

    started = time.perf_counter()
    log(f"library {root}")
    report = library.import_paths(paths, progress)
    seconds = time.perf_counter() - started
    if report.errors:
        raise RuntimeError(f"import errors: {report.errors}")
    unfinished = [f"{f.title}: {f.state} {f.error}".strip() for f in library.footage() if f.state != "indexed"]
    if unfinished:
        raise RuntimeError("footage not indexed: " + "; ".join(unfinished))
    return library, seconds, stage_s


def named_copy(library: Library, plan, log=print, reuse: bool = False) -> Library:
    """A fresh copy of the built library (beside it, "-named") with its voices named as a person names them
    in the People panel; the built library stays unnamed for the runs before naming. `reuse`: open the
    copy an earlier run named, with its reply cache, when there is one."""
    source = library.paths.root
    library.close()
    target = source.with_name(source.name + "-named")
    if reuse and target.exists():
        return Library(target)
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
    named = Library(target)
    started = time.perf_counter()
    actions = name_voices(named, plan)
    log(f"voices named as a person would ({time.perf_counter() - started:.1f} s, the memories they show brought up to date):")
    for n in actions:
        log(f"  voice {n.voice}: sounds like {n.heard_as or 'nobody met'} -> {n.action}")
    return named


def _spans(evidence) -> list[tuple[str, float, float]]:
    return [(e.source, e.start, e.end) for e in evidence]


def ask_all(
    library: Library,
    questions: list[DayQuestion],
    strategy: str | None,
    log=print,
    checkpoint=lambda results: None,
    typed: bool = False,
    unheard: dict[str, list[str]] | None = None,
) -> list[QuestionResult]:
    """Every question through `Library.ask`, judged; chips are scored in the order the answer lists them.
    `checkpoint` sees the results so far after each answer (answers cost many seconds each on a CPU).
    With `typed`, each question is first read ahead as a pause in typing it does in the window
    (`Library.prepare_to_answer`), then asked: the times are from pressing Enter. `unheard` names each
    question's key words that recognition did not hear (kept in its result)."""
    results: list[QuestionResult] = []
    for item in questions:
        q = item.bench
        if typed:
            library.prepare_to_answer(q.question, asked_at=q.asked_at)
        words_at: list[float] = []
        started = time.perf_counter()
        answer = library.ask(
            q.question,
            asked_at=None if typed else q.asked_at,  # typed: asked at the time it was typed, q.asked_at
            strategy=strategy,
            on_text=lambda piece, seen=words_at: None if seen else seen.append(time.perf_counter()),
        )
        total_ms = (time.perf_counter() - started) * 1000
        moments = [(w.source, w.start, w.end) for w in q.evidence]
        chips = _spans(answer.evidence)
        cited = [e for e in answer.evidence if e.unit_id in set(answer.cited)]
        result = QuestionResult(
            q.id,
            q.category,
            q.unanswerable,
            abstained=answer.abstained,
            grounded=answer.grounded,
            tokens=answer.tokens,
            answer_ms=total_ms,
        )
        result.correct = answer.abstained if q.unanswerable else (not answer.abstained and is_right(answer.text, item.accept))
        result.detail = {
            "question": q.question,
            "answer": answer.text,
            "expected": item.accept,
            "strategy": answer.extra.get("strategy"),
            "first_words_ms": (words_at[0] - started) * 1000 if words_at else None,
            "unheard": (unheard or {}).get(q.id, []),
            "chips": [
                {"source": e.source, "start": e.start, "end": e.end, "cited": e.unit_id in answer.cited}
                for e in answer.evidence[:8]
            ],
        }
        if moments:
            result.retrieval = {"chips@3": hit_at_k(chips, moments, 3), "chips@5": hit_at_k(chips, moments, 5)}
            result.detail["cite_ok"] = any(e.source == s and overlaps(e.start, e.end, a, b) for e in cited for s, a, b in moments)
        results.append(result)
        checkpoint(results)
        mark = "ok " if result.correct else "BAD"
        missed = f" [unheard: {', '.join(result.detail['unheard'])}]" if result.detail["unheard"] else ""
        log(f"  {mark} {q.id} [{q.category}] {q.question} -> {answer.text[:120]!r} ({total_ms / 1000:.1f} s){missed}")
    return results


def ask_summary(results: list[QuestionResult]) -> dict:
    """The runner's summary plus cite_ok (the share of questions with a moment where a cited unit is on
    it) and false refusals (answerable questions abstained)."""
    summary = summarize(results)
    summary["false_refusals"] = sum(r.abstained and not r.unanswerable for r in results)
    cites = [float(r.detail["cite_ok"]) for r in results if "cite_ok" in r.detail]
    summary["cite_ok"] = sum(cites) / len(cites) if cites else None
    words = [r.detail["first_words_ms"] for r in results if r.detail.get("first_words_ms") is not None]
    for q in (50, 95):
        summary[f"first_words_p{q}_ms"] = percentile(words, q) if words else None
    return summary


def ask_by_category(results: list[QuestionResult]) -> dict[str, dict]:
    groups: dict[str, list[QuestionResult]] = {}
    for r in results:
        groups.setdefault(r.category, []).append(r)
    return {name: ask_summary(group) for name, group in sorted(groups.items())}


def retrieval_runs(library: Library, questions: list[DayQuestion], strategies: list[str], log=print) -> dict[str, dict]:
    """Retrieval alone, per strategy; strategies whose memory was not built are reported as skipped."""
    from egodesk.retrieval.registry import make_strategy

    memory = library.memory
    out: dict[str, dict] = {}
    for name in strategies:
        missing = make_strategy(name, memory).missing_spaces()
        if missing:
            log(f"  {name}: skipped (needs {', '.join(missing)})")
            continue
        results = run_questions(memory, [q.bench for q in questions], name, k=12)
        out[name] = {
            "summary": summarize(results),
            "by_category": by_category(results),
            "questions": [{"id": r.id, "hit@5": r.retrieval.get("hit@5")} for r in results if r.retrieval],
        }
    return out


def table(rows: list[tuple[str, dict]], columns: tuple[str, ...]) -> str:
    width = max([16] + [len(name) for name, _ in rows])
    labels = [c.replace("abstention_", "abst_") for c in columns]
    lines = [f"{'':<{width}}" + "".join(f"{label:>{max(9, len(label) + 2)}}" for label in labels) + f"{'n':>5}"]
    for name, group in rows:
        lines.append(
            f"{name:<{width}}"
            + "".join(f"{format_value(c, group.get(c)):>{max(9, len(label) + 2)}}" for c, label in zip(columns, labels))
            + f"{group['questions']:>5}"
        )
    return "\n".join(lines)


def strategy_matrix(runs: dict[str, dict]) -> str:
    """One row per strategy: Hit@1, Hit@5, then Hit@5 per category."""
    categories = sorted({c for run in runs.values() for c, g in run["by_category"].items() if g.get("hit@5") is not None})
    rows = []
    for name, run in runs.items():
        row = {
            "questions": run["summary"]["retrieval_questions"],
            "hit@1": run["summary"].get("hit@1"),
            "hit@5": run["summary"].get("hit@5"),
        }
        row.update({c: run["by_category"].get(c, {}).get("hit@5") for c in categories})
        rows.append((name, row))
    return table(rows, ("hit@1", "hit@5", *categories))


def transcript_words(library: Library) -> list[hearing.HeardWord]:
    """Every recognised word of the library with its wall-clock span and probability."""
    with library.memory.store.session() as s:
        rows = s.execute(select(TranscriptSegment.words)).scalars().all()
    return [hearing.HeardWord(str(w[0]), float(w[1]), float(w[2]), float(w[3])) for words in rows for w in words or ()]


def speaker_report(library: Library, plan, log=print) -> dict:
    """How many recognised words carry the label of the person the script says said them (after naming:
    before it, no voice has a name)."""
    with library.memory.store.session() as s:
        rows = s.execute(select(TranscriptSegment.speaker, TranscriptSegment.words)).all()
    words = [(speaker, float(w[1]), float(w[2])) for speaker, heard in rows for w in heard or ()]
    right, total = words_with_their_speaker(script(plan), words)
    log(f"words labelled with the person who said them: {right} of {total} ({right / max(1, total):.1%})")
    return {"words": total, "right": right, "share": round(right / max(1, total), 4)}


def hearing_report(library: Library, plan, questions: list[DayQuestion], log=print) -> tuple[dict, dict[str, list[str]]]:
    """The word error rate against the plan's script (per voice, per noise level) and each question's
    unheard key words; logs the table and the count."""
    lines, words = script(plan), transcript_words(library)
    groups = hearing.wer_by(lines, words)
    log("speech recognition against the script (WER: word errors / words said)")
    log(hearing.wer_table(groups))
    unheard = {
        q.bench.id: hearing.unheard(q.heard, lines, words, [(m.start, m.end) for m in q.bench.evidence]) for q in questions
    }
    unheard = {qid: keys for qid, keys in unheard.items() if keys}
    log(f"questions whose key words were not heard as said: {len(unheard)} of {len(questions)}")
    report = {kind: {name: vars(t) | {"wer": round(t.wer, 4)} for name, t in group.items()} for kind, group in groups.items()}
    return report, unheard


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--day", choices=("clean", "real"), default="clean", help="which test day (report both)")
    parser.add_argument("--out", type=Path, help="folder of the generated video files (default: named by the day's plan)")
    parser.add_argument("--questions", type=Path, help="the questions (default: the day's own)")
    parser.add_argument(
        "--llm",
        default="llm-quality",
        choices=("llm-quality", "llm-fast", "llm-test"),
        help="the LLM that builds the memories and answers",
    )
    parser.add_argument("--strategy", help="the strategy ask uses (default: the settings' strategy, auto)")
    parser.add_argument("--strategies", default=DEFAULT_STRATEGIES, help="retrieval-only runs, comma separated")
    parser.add_argument(
        "--limit", type=int, help="ask N questions only, taken round robin over the categories (retrieval alone runs them all)"
    )
    parser.add_argument("--no-memories", action="store_true", help="skip the LLM memories (records, atomic statements)")
    parser.add_argument("--no-answers", action="store_true", help="retrieval-only runs alone")
    parser.add_argument("--typed", action="store_true", help="read each question ahead (a pause in typing it) before asking it")
    parser.add_argument("--rebuild", action="store_true", help="import into a fresh library even when one is cached")
    parser.add_argument(
        "--named",
        action="store_true",
        help="ask a copy of the library whose voices were named as a person names them (testday/naming.py)",
    )
    parser.add_argument("--json", type=Path, help="write the report here (default: report.json in the library folder)")
    args = parser.parse_args(argv)

    say = lambda line: print(line, flush=True)  # noqa: E731
    plan = plan_of(args.day)
    questions = interleaved(load_questions(args.questions or (QUESTIONS if plan is DAY else REAL_QUESTIONS)))
    asked = questions[: args.limit] if args.limit is not None else questions
    paths = make_day(args.out or default_out(None if plan is DAY else plan), log=say, plan=plan)
    settings = library_settings(args.llm, not args.no_memories)
    library, import_s, stage_s = built_library(paths, settings, args.rebuild, log=say)
    if args.named:
        library = named_copy(library, plan, log=say)
    footage_s = sum(f.duration for f in library.footage())
    llm_s = sum(stage_s.get(stage, 0.0) for stage in LLM_STAGES)
    if llm_s:
        say(
            f"LLM memories (records + atomic) built now: {llm_s:.0f} s for {footage_s:.0f} s of footage, "
            f"{llm_s / footage_s:.2f}x real time (the LLM's load and kept rules included)"
        )
    report: dict = {
        "day": args.day,
        "llm": args.llm,
        "memories": not args.no_memories,
        "library": str(library.paths.root),
        "files": [p.name for p in paths],
        "import_seconds": round(import_s, 1),
        "footage_seconds": round(footage_s, 1),
        "stage_seconds": {stage: round(v, 1) for stage, v in stage_s.items()},
        "questions": len(questions),
        "named": args.named,
    }
    path = Path(args.json or library.paths.root / "report.json")
    strategy = args.strategy or settings.strategy

    def ask_report(results: list[QuestionResult]) -> dict:
        return {
            "strategy": strategy,
            "summary": ask_summary(results),
            "by_category": ask_by_category(results),
            "questions": [r.__dict__ for r in results],
        }

    def checkpoint(results: list[QuestionResult]) -> None:
        write_report(path, {**report, "ask": ask_report(results)})

    try:
        report["hearing"], report["unheard"] = hearing_report(library, plan, questions, log=say)
        if args.named:
            report["speakers"] = speaker_report(library, plan, log=say)
        unheard = report["unheard"]
        say("\nretrieval alone, k=12: Hit@1, Hit@5 and Hit@5 per category")
        report["retrieval"] = retrieval_runs(library, questions, args.strategies.split(","), log=say)
        say(strategy_matrix(report["retrieval"]))
        write_report(path, report)
        if not args.no_answers:
            say(f"\nasking {len(asked)} questions with {args.llm} (strategy {strategy})")
            results = ask_all(library, asked, args.strategy, log=say, checkpoint=checkpoint, typed=args.typed, unheard=unheard)
            report["ask"] = ask_report(results)
            say(f"\nask path (strategy {strategy}, {args.llm}, memories {'on' if report['memories'] else 'off'})")
            summary = report["ask"]["summary"]
            subset = [r for r in results if r.detail["unheard"]]
            misheard = [("key word unheard", ask_summary(subset))] if subset else []
            say(table([("all", summary), *report["ask"]["by_category"].items(), *misheard], ASK_COLUMNS))
            write_report(path, report)
    finally:
        library.close()
    say(f"\nreport: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
