"""`egodesk eval`: import a benchmark into a scratch library, build its memory, run every question
through a strategy (and optionally the answerer), score, print and write a JSON report.

The scratch library is cached by the hash of memory.jsonl under ~/.cache/egodesk/bench-libraries/
(or a folder given), so the second run of a benchmark skips import and embedding. An answering run
costs seconds of LLM time per question on a CPU, so the report file doubles as a checkpoint: it is
rewritten as questions finish, and `resume` picks up the questions a report of the same run lacks. Parent-child memory
is always built; records and atomic views are used when they were built in that library (they need
the LLM over every entry, which is for a separate, long `build` run).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import platformdirs
from sqlalchemy import func, select

from egodesk.core.paths import APP_NAME, LibraryPaths
from egodesk.core.settings import Settings
from egodesk.core.types import Progress
from egodesk.eval.benchmark import Benchmark, BenchQuestion, load_benchmark
from egodesk.eval.metrics import QuestionResult, by_category, retrieval_scores, summarize, token_f1
from egodesk.eval.reply_cache import ReplyCache
from egodesk.memory.indices import IndexManager
from egodesk.memory.store import Footage, Store, Unit
from egodesk.perception.embedder import TextEmbedder
from egodesk.perception.llm_base import LLM
from egodesk.pipeline.ask import AskRequest, answer, retrieve
from egodesk.retrieval.base import Memory
from egodesk.retrieval.catalog import PARENT_KINDS
from egodesk.retrieval.registry import make_strategy, strategy_class

REPORT_KS = (1, 5, 12)
SUMMARY_ORDER = ("hit@1", "hit@5", "hit@12", "recall@5", "recall@12", "ndcg@5", "ndcg@12")


def default_library_root(bench: Benchmark, model_id: str | None = None) -> Path:
    """One cached library per benchmark and text embedder (the default one unless named): vectors of
    two embedders never meet in one library, and switching back and forth re-embeds nothing."""
    from egodesk.perception.embedder import DEFAULT_MODEL, MODEL_ID_OF_ROLE

    model = model_id or MODEL_ID_OF_ROLE[DEFAULT_MODEL]
    return platformdirs.user_cache_path(APP_NAME) / "bench-libraries" / f"{bench.name}-{bench.memory_hash()[:16]}-{model}"


def open_library(
    bench: Benchmark,
    embedder: TextEmbedder,
    settings: Settings,
    library_dir: Path | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> tuple[Store, IndexManager]:
    """The benchmark's library: imported once; parent-child built for the footage the questions search
    (`question_footage`: a later run with more questions adds the rest), reused after. A library
    built with another embedder than `embedder` is re-embedded first."""
    from egodesk.memory.parent_child import build_parent_child
    from egodesk.memory.reembed import reembed
    from egodesk.pipeline.textimport import import_memory_jsonl

    paths = LibraryPaths.at(library_dir or default_library_root(bench, embedder.model_id)).ensure()
    store = Store(paths.database)
    indices = IndexManager(store, paths.indices)
    reembed(store, indices, embedder, progress)
    result = import_memory_jsonl(store, bench.memory_path)
    with store.session() as s:
        built = set(s.scalars(select(Unit.footage_id).where(Unit.kind.in_(PARENT_KINDS)).group_by(Unit.footage_id)))
        footage = question_footage(s, bench)
    todo = [fid for fid in footage if fid not in built]
    for done, fid in enumerate(todo, start=1):
        build_parent_child(store, indices, embedder, fid, settings)
        if progress:
            progress(Progress("parent-child", done, len(todo), fid))
    if todo or result.new_ids:
        indices.save()
    return store, indices


def question_footage(s, bench: Benchmark) -> list[int]:
    """The footage the benchmark's (limited) questions search: their sources when every question names
    them, else all of it."""
    sources = sorted({str(src) for q in bench.questions for src in (q.sources or [])})
    wanted = select(Footage.id).order_by(Footage.id)
    if sources and all(q.sources for q in bench.questions):
        wanted = wanted.where(Footage.title.in_(sources))
    return list(s.scalars(wanted).all())


LLM_MEMORIES = ("records", "atomic")


def build_llm_memories(
    store: Store,
    indices: IndexManager,
    embedder: TextEmbedder,
    llm: LLM,
    bench: Benchmark,
    settings: Settings,
    memories: tuple[str, ...],
    progress: Callable[[Progress], None] | None = None,
) -> dict:
    """Build the LLM memories (interaction records, atomic statements) of the footage the questions
    search, not of the whole benchmark: on a CPU that takes hours, so a stated subset (e.g. the
    sources of the first N questions) is what can be evaluated. Builds resume and are kept in the
    cached library: a later run adds only what is missing. Returns per memory its footage count,
    clips built now and seconds."""
    from egodesk.memory.atomic import build_atomic
    from egodesk.memory.record_compression import build_records

    builders = {"records": build_records, "atomic": build_atomic}
    with store.session() as s:
        footage = question_footage(s, bench)
    out = {}
    for name in memories:
        started, clips = time.perf_counter(), 0
        for fid in footage:
            clips += builders[name](store, indices, embedder, llm, fid, settings, progress=progress)["clips_done"]
        out[name] = {"footage": len(footage), "clips_built": clips, "seconds": round(time.perf_counter() - started, 1)}
    indices.save()
    return out


def _spans(evidence) -> list[tuple[str, float, float]]:
    return [(e.source, e.start, e.end) for e in evidence]


def _score_answer(q: BenchQuestion, result: QuestionResult, answer) -> None:
    result.abstained = answer.abstained
    result.grounded = answer.grounded
    result.tokens = answer.tokens
    result.answer_ms = answer.timings.get("answer_s", 0.0) * 1000
    if q.unanswerable:
        result.correct = answer.abstained
    elif q.options:
        result.correct = answer.option_index == q.answer_idx
    if q.answer is not None and not q.options and not q.unanswerable:
        result.f1 = 0.0 if answer.abstained else token_f1(answer.text, str(q.answer))
    result.detail.update(answer=answer.text, option_index=answer.option_index, cited=answer.cited, reasoning=answer.reasoning)


def run_questions(
    memory: Memory,
    questions: list[BenchQuestion],
    strategy: str,
    k: int,
    llm: LLM | None = None,
    online: bool = True,
    progress: Callable[[Progress], None] | None = None,
    done: dict[str, QuestionResult] | None = None,
    checkpoint: Callable[[list[QuestionResult]], None] | None = None,
) -> list[QuestionResult]:
    """Every question through the app's own ask path (`pipeline.ask`): retrieval with the strategy, and
    the answerer when `llm` is given. Results in `done` (by question id) are taken as they are;
    `checkpoint` sees the results so far after each new one."""
    ks = sorted({*REPORT_KS, k})
    count_tokens = getattr(llm, "count_tokens", None)
    results = []
    for n, q in enumerate(questions, start=1):
        if done and q.id in done:
            results.append(done[q.id])
            continue
        request = AskRequest.make(
            q.question, memory.settings, count_tokens, q.options, q.asked_at, strategy, max(ks), q.sources, online
        )
        found = retrieve(memory, request)
        result = QuestionResult(q.id, q.category, q.unanswerable, latency_ms=found.seconds * 1000)
        if q.evidence:
            result.retrieval = retrieval_scores(_spans(found.evidence), [(w.source, w.start, w.end) for w in q.evidence], ks)
        result.detail["retrieved"] = [
            {
                "unit": ev.unit_id,
                "source": ev.source,
                "start": ev.start,
                "end": ev.end,
                "score": round(ev.score, 4),
                "strategy": ev.strategy,
            }
            for ev in found.evidence[:k]
        ]
        if found.window is not None:
            result.detail["window"] = [found.window.label, found.window.start, found.window.end]
        if llm is not None:
            saved = getattr(llm, "saved_seconds", 0.0)
            found.evidence = found.evidence[:k]
            _score_answer(q, result, answer(memory, llm, found))
            if getattr(llm, "saved_seconds", 0.0) > saved:  # a kept reply: report what answering it cost the model
                result.answer_ms += (llm.saved_seconds - saved) * 1000
                result.detail["reply_reused"] = True
        results.append(result)
        if checkpoint:
            checkpoint(results)
        if progress:
            progress(Progress("questions", n, len(questions)))
    return results


RUN_KEYS = ("benchmark", "strategy", "k", "answer", "online", "llm")


def resumable_results(report: Path, run: dict) -> dict[str, QuestionResult]:
    """The finished questions of an earlier report of the same run (same benchmark, strategy, k,
    answering and model); nothing when the report is missing, unreadable or of another run."""
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or any(data.get(key) != run[key] for key in RUN_KEYS):
        return {}
    return {q["id"]: QuestionResult(**q) for q in data.get("questions", [])}


def format_value(metric: str, value) -> str:
    """A summary figure as printed: counts, milliseconds and tokens whole, scores and shares to 3 places."""
    if value is None:
        return "-"
    whole = isinstance(value, int) or metric.endswith("_ms") or metric == "tokens"
    return f"{value:.0f}" if whole else f"{value:.3f}"


def report_table(data: dict) -> str:
    """The printed table of a run's report (`run_eval`'s return value)."""
    title = f"{Path(data['benchmark']).name}  strategy={data['strategy']}  k={data['k']}  questions={len(data['questions'])}"
    return format_summary(title, data["summary"], data["by_category"])


def format_summary(title: str, summary: dict, categories: dict[str, dict]) -> str:
    keys = [k for k in SUMMARY_ORDER if k in summary] + [
        k
        for k in (
            "accuracy",
            "f1",
            "abstention_precision",
            "abstention_recall",
            "grounded",
            "tokens",
            "latency_p50_ms",
            "latency_p95_ms",
            "answer_p50_ms",
            "answer_p95_ms",
        )
        if summary.get(k) is not None
    ]
    labels = [k.replace("latency_", "ret_").replace("abstention_", "abst_") for k in keys]
    widths = [max(len(label) + 2, 8) for label in labels]
    head = f"{'':<16}" + "".join(f"{label:>{w}}" for label, w in zip(labels, widths)) + f"{'n':>7}"
    rows = [title, head]
    for name, group in [("all", summary), *categories.items()]:
        rows.append(
            f"{name[:16]:<16}"
            + "".join(f"{format_value(k, group.get(k)):>{w}}" for k, w in zip(keys, widths))
            + f"{group['questions']:>7}"
        )
    return "\n".join(rows)


def run_eval(
    bench_dir,
    strategy: str,
    k: int = 12,
    answer: bool = False,
    limit: int | None = None,
    report=None,
    library_dir=None,
    online: bool = True,
    settings: Settings | None = None,
    embedder: TextEmbedder | None = None,
    llm: LLM | None = None,
    progress: Callable[[Progress], None] | None = None,
    quiet: bool = False,
    resume: bool = False,
    memories: tuple[str, ...] = (),
    reuse_replies: bool = True,
) -> dict:
    """Run a benchmark; prints the table, writes the JSON report (if `report`) and returns it. With
    `resume`, questions already in `report` from the same run are not asked again. `memories` ("records",
    "atomic") are built with the LLM first, for the questions' sources only (`build_llm_memories`). With
    `reuse_replies`, an answer prompt this library's runs already sent the same model is answered from
    the library's reply cache (`ReplyCache`) instead of the model."""
    from egodesk.perception.embedder import make_embedder

    settings = settings or Settings.load(None)  # defaults with EGODESK_<FIELD> overrides
    bench = load_benchmark(bench_dir, limit)
    embedder = embedder or make_embedder(threads=min(2, settings.threads), model=settings.embedder_model)
    library_root = Path(library_dir) if library_dir else default_library_root(bench, embedder.model_id)
    store, indices = open_library(bench, embedder, settings, library_root, progress)
    judged = strategy_class(strategy).needs_llm  # the LLM reranker judges candidates
    if (answer or memories or judged) and llm is None:
        from egodesk.perception.llm import make_llm

        llm = make_llm(settings)
    run = {
        "benchmark": str(bench.root),
        "strategy": strategy,
        "k": k,
        "answer": answer,
        "online": online,
        "llm": getattr(llm, "model_id", None) if answer or judged else None,
    }
    if memories:  # only then: reports written before memories could be built still resume
        built = build_llm_memories(store, indices, embedder, llm, bench, settings, memories, progress)
        run["memories"] = {name: {**built[name], "llm": llm.model_id} for name in memories}
    memory = Memory(store, indices, embedder, llm=llm, settings=settings)
    _check_spaces(memory, strategy, bench.name)
    data = _ask_all(memory, bench, run, answer, online, progress, report, resume, library_root, llm, reuse_replies)
    if not quiet:
        print(report_table(data))
    if report:
        write_report(Path(report), data)
    store.close()
    return data


def _check_spaces(memory: Memory, strategy: str, bench_name: str) -> None:
    """Refuse a strategy that searches memory the library never built: scored, it would report zeros
    as if measured."""
    missing = make_strategy(strategy, memory).missing_spaces()
    if missing:
        memory.store.close()
        raise ValueError(
            f"strategy {strategy!r} searches {', '.join(missing)}, which the {bench_name} library does not "
            f"hold yet: build the LLM memories first with --memories {' '.join(LLM_MEMORIES)}"
        )


def _ask_all(
    memory: Memory,
    bench,
    run: dict,
    answer: bool,
    online: bool,
    progress,
    report,
    resume: bool,
    library_root: Path,
    llm: LLM,
    reuse_replies: bool,
) -> dict:
    """The run's questions asked (those `report` holds from the same run kept, with `resume`), its
    report written at checkpoints; the whole report."""
    strategy, k = run["strategy"], run["k"]
    done = resumable_results(Path(report), run) if report and resume else {}
    started = time.perf_counter()
    units = count_units(memory.store)

    def report_of(results: list[QuestionResult]) -> dict:
        return {
            **run,
            "units": units,
            "seconds": round(time.perf_counter() - started, 2),
            "summary": summarize(results),
            "by_category": by_category(results),
            "replies_reused": sum(bool(r.detail.get("reply_reused")) for r in results),
            "questions": [r.__dict__ for r in results],
        }

    def checkpoint(results: list[QuestionResult]) -> None:
        if answer or len(results) % 50 == 0:  # answers cost seconds each: never lose more than one
            write_report(Path(report), report_of(results))

    answerer = None
    if answer:
        answerer = ReplyCache(llm, library_root / "llm-replies.sqlite") if reuse_replies else llm
    try:
        results = run_questions(
            memory, bench.questions, strategy, k, answerer, online, progress, done=done, checkpoint=checkpoint if report else None
        )
    finally:
        if isinstance(answerer, ReplyCache):
            answerer.close()
    return report_of(results)


def write_report(path: Path, data: dict) -> None:
    """Whole or not at all: a kill mid-write must leave the last checkpoint readable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=1, default=float), encoding="utf-8")
    partial.replace(path)


def count_units(store: Store) -> dict[str, int]:
    """Units per kind (for reports)."""
    with store.session() as s:
        return dict(s.execute(select(Unit.kind, func.count(Unit.id)).group_by(Unit.kind)).all())
