import json

import pytest

from egodesk.core.settings import Settings
from egodesk.eval.benchmark import BenchmarkError, load_benchmark
from egodesk.eval.runner import format_summary, run_eval
from tests.doubles import ScriptedLLM

REPLIES = [  # the tiny bench's three questions, answered right
    {"evidence": ["E1"], "reasoning": "-", "answer": "From 09:00:30 to 09:00:40"},
    {"evidence": ["E1"], "reasoning": "-", "answer": "Pixel"},
    {"evidence": [], "reasoning": "-", "answer": "NOT_FOUND"},
]


def answering(bench, tmp_path, embedder, llm, strategy="hybrid", **kwargs) -> dict:
    """An answering `run_eval` of the tiny bench (k=5) in the scratch library `tmp_path/lib`, quiet."""
    return run_eval(
        bench,
        strategy,
        k=5,
        answer=True,
        library_dir=tmp_path / "lib",
        embedder=embedder,
        llm=llm,
        quiet=True,
        settings=Settings(),
        **kwargs,
    )


def test_load_benchmark_parses_times_options_and_evidence(bench):
    b = load_benchmark(bench)
    assert len(b.entries) == 6 and [q.id for q in b.questions] == ["q1", "q2", "q3"]
    q1 = b.questions[0]
    assert q1.is_multiple_choice and q1.answer_idx == 1 and q1.sources == ["s1"]
    assert q1.evidence[0].end - q1.evidence[0].start == 10 and q1.asked_at - q1.evidence[0].end == 20
    assert b.questions[2].unanswerable and not b.questions[1].is_multiple_choice
    assert len(load_benchmark(bench, limit=1).questions) == 1
    assert len(b.memory_hash()) == 64


def test_bad_benchmark_lines_name_file_and_line(tmp_path, bench):
    (bench / "questions.jsonl").write_text('{"id": "x"}\n')
    with pytest.raises(BenchmarkError, match=r"questions.jsonl:1: bad field"):
        load_benchmark(bench)
    with pytest.raises(BenchmarkError, match="missing"):
        load_benchmark(tmp_path / "nowhere")


def test_run_eval_retrieval_report_and_library_reuse(bench, tmp_path, embedder, capsys):
    report = tmp_path / "out" / "report.json"
    data = run_eval(bench, "timeaware", k=5, report=report, library_dir=tmp_path / "lib", embedder=embedder)
    saved = json.loads(report.read_text())
    assert saved["summary"]["hit@1"] == data["summary"]["hit@1"] == 1.0
    assert {"hit@5", "hit@12", "recall@12", "ndcg@5", "latency_p50_ms", "latency_p95_ms"} <= set(saved["summary"])
    assert saved["summary"]["retrieval_questions"] == 2 and set(saved["by_category"]) == {
        "last-time",
        "single-hop",
        "adversarial",
    }
    assert saved["questions"][0]["detail"]["retrieved"][0]["start"] > 0
    assert saved["units"]["caption"] == 4 and saved["units"]["transcript"] == 2
    printed = capsys.readouterr().out
    assert "tiny-bench" in printed and "hit@5" in printed and "last-time" in printed
    again = run_eval(bench, "hybrid", k=5, library_dir=tmp_path / "lib", embedder=embedder, quiet=True)
    assert again["units"] == data["units"]  # reused: nothing imported or built twice


def test_run_eval_with_answers_scores_accuracy_f1_abstention(bench, tmp_path, embedder):
    data = answering(bench, tmp_path, embedder, ScriptedLLM(*REPLIES))
    s = data["summary"]
    assert s["accuracy"] == 1.0 and s["f1"] == 1.0
    assert s["abstention_precision"] == 1.0 and s["abstention_recall"] == 1.0
    assert s["grounded"] == 1.0 and s["tokens"] == 321
    assert data["questions"][1]["detail"]["answer"] == "Pixel"
    printed = format_summary("tiny", s, data["by_category"])
    head = printed.splitlines()[1].split()
    assert {"ret_p50_ms", "ret_p95_ms", "answer_p50_ms", "answer_p95_ms", "accuracy", "f1"} <= set(head)
    assert abs(float(printed.splitlines()[2].split()[head.index("answer_p50_ms") + 1]) - s["answer_p50_ms"]) <= 0.5


def test_an_interrupted_answering_run_resumes_from_its_report(bench, tmp_path, embedder):
    report = tmp_path / "report.json"
    with pytest.raises(RuntimeError):
        answering(bench, tmp_path, embedder, ScriptedLLM(REPLIES[0], RuntimeError("the process died here")), report=report)
    assert len(json.loads(report.read_text())["questions"]) == 1  # the checkpoint kept the finished one
    rest = ScriptedLLM(*REPLIES[1:])
    data = answering(bench, tmp_path, embedder, rest, report=report, resume=True)
    assert len(rest.sent) == 2 and data["summary"]["accuracy"] == 1.0 and data["summary"]["f1"] == 1.0
    assert [q["id"] for q in data["questions"]] == [q["id"] for q in json.loads(report.read_text())["questions"]]
    other = ScriptedLLM(*REPLIES)  # another strategy's report is not this run's: everything is asked again
    answering(bench, tmp_path, embedder, other, "flat", report=report, resume=True, reuse_replies=False)
    assert len(other.sent) == 3


def test_a_prompt_answered_before_is_answered_from_the_reply_cache_with_its_original_cost(bench, tmp_path, embedder):
    first = answering(bench, tmp_path, embedder, ScriptedLLM(*REPLIES, delay=0.05))
    silent = ScriptedLLM()  # any call would fail: it has no replies
    again = answering(bench, tmp_path, embedder, silent)
    assert silent.sent == [] and first["replies_reused"] == 0 and again["replies_reused"] == 3
    assert [q["detail"]["answer"] for q in again["questions"]] == [q["detail"]["answer"] for q in first["questions"]]
    assert again["summary"]["accuracy"] == first["summary"]["accuracy"] == 1.0
    assert all(q["answer_ms"] >= 50 for q in again["questions"])  # the model's time, not the lookup's
    fresh = ScriptedLLM(*REPLIES)
    answering(bench, tmp_path, embedder, fresh, reuse_replies=False)
    assert len(fresh.sent) == 3


def test_llm_memories_are_built_for_the_questions_sources_only(bench, tmp_path, embedder):
    """`--memories records`: records for the footage the chosen questions search (q1: s1), none for the
    rest; the records strategy then answers from them, and a second run builds nothing again."""
    from sqlalchemy import func, select

    from egodesk.memory.record_compression import RECORD
    from egodesk.memory.store import Footage, Store, Unit
    from tests.memory.test_forget_records import NarrationReader

    library = tmp_path / "lib"

    def build_and_run() -> dict:
        return run_eval(
            bench,
            "records",
            k=5,
            limit=1,
            library_dir=library,
            embedder=embedder,
            llm=NarrationReader(),
            memories=("records",),
            quiet=True,
        )

    data = build_and_run()
    assert data["memories"]["records"]["footage"] == 1 and data["memories"]["records"]["clips_built"] == 4
    assert data["summary"]["hit@5"] == 1.0 and data["questions"][0]["detail"]["retrieved"]
    store = Store(library / "library.sqlite")
    with store.session() as s:
        per_source = dict(
            s.execute(
                select(Footage.title, func.count(Unit.id))
                .join(Unit, Unit.footage_id == Footage.id)
                .where(Unit.kind == RECORD)
                .group_by(Footage.title)
            ).all()
        )
    store.close()
    assert per_source == {"s1": 4}
    again = build_and_run()
    assert again["memories"]["records"]["clips_built"] == 0
    assert again["questions"][0]["detail"]["retrieved"] == data["questions"][0]["detail"]["retrieved"]


def test_a_strategy_whose_memory_is_not_built_is_refused_not_scored_zero(bench, tmp_path, embedder):
    with pytest.raises(ValueError, match=r"'records' searches record-object.*--memories records"):
        run_eval(bench, "records", k=5, library_dir=tmp_path / "lib", embedder=embedder, quiet=True)


def test_the_rerank_strategy_is_evaluated_with_the_llm_judge(bench, tmp_path, embedder):
    """Retrieval-only eval of `rerank` still needs the LLM (it judges the candidates); the run names it."""

    class Judge:
        model_id = "judge"
        asked = 0

        def yes_probability(self, messages):
            self.asked += 1
            return 1.0 if "Pixel" in messages[-1]["content"] else 0.0

    judge = Judge()
    data = run_eval(bench, "rerank", k=5, library_dir=tmp_path / "lib", embedder=embedder, llm=judge, quiet=True)
    assert judge.asked > 0 and data["llm"] == "judge"
    assert data["questions"][1]["retrieval"]["hit@1"] == 1.0  # the judged passage about Pixel ranks first


def test_the_eval_command_shows_its_progress_then_the_table(bench, tmp_path):
    """A run of hours must not sit silent: the import and the questions show on stderr, the table on stdout."""
    import subprocess
    import sys

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "egodesk",
            "eval",
            str(bench),
            "--strategy",
            "hybrid",
            "--k",
            "5",
            "--scratch",
            str(tmp_path / "lib"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "parent-child" in result.stderr and "questions" in result.stderr and "3/3" in result.stderr
    assert "footage None" not in result.stderr  # the questions' bar is the run's, named by its stage alone
    assert "tiny-bench  strategy=hybrid  k=5  questions=3" in result.stdout and "hit@5" in result.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "egodesk", "eval", str(tmp_path / "nowhere"), "--scratch", str(tmp_path / "lib")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2 and missing.stderr.startswith("error: ") and "Traceback" not in missing.stderr
