"""benchmarks/strategy_table.py: one row per strategy, the answerer's columns with --answer, rows that
are the runs' own summaries, and answered runs that continue from their reports."""

import functools
import json

from benchmarks.strategy_table import ANSWER_COLUMNS, RETRIEVAL_COLUMNS, strategy_table
from egodesk.core.settings import Settings
from egodesk.eval.runner import run_eval
from tests.doubles import ScriptedLLM

REPLIES = {
    "take paper": {"evidence": ["E1"], "reasoning": "-", "answer": "From 09:00:30 to 09:00:40"},
    "Ana's cat": {"evidence": ["E1"], "reasoning": "-", "answer": "Pixel"},
    "Ben's parrot": {"evidence": [], "reasoning": "-", "answer": "NOT_FOUND"},
}


class QuestionLLM(ScriptedLLM):
    """The chat model answering each tiny-bench question by what it asks."""

    model_id = "question-llm"

    def __init__(self):
        super().__init__(prompt_tokens=100)

    def reply(self, messages, schema):
        return next(reply for key, reply in REPLIES.items() if key in messages[-1]["content"])


def rows(table: str) -> dict[str, dict[str, str]]:
    lines = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()]
    head = lines[0]
    return {f"{r[0]}@{r[1]}": dict(zip(head, r)) for r in lines[2:]}


def test_answered_table_rows_are_the_runs_summaries_and_resume_from_reports(bench, tmp_path, embedder):
    llm = QuestionLLM()
    run = functools.partial(run_eval, library_dir=tmp_path / "lib", embedder=embedder, llm=llm, settings=Settings())
    echoed = []
    table = rows(
        strategy_table(
            [str(bench)],
            ["hybrid", "timeaware"],
            answer=True,
            answer_k=5,
            reports=tmp_path / "reports",
            run=run,
            echo=echoed.append,
        )
    )
    assert set(table) == {"hybrid@tiny-bench", "timeaware@tiny-bench"} and len(echoed) == 4
    for strategy in ("hybrid", "timeaware"):
        row = table[f"{strategy}@tiny-bench"]
        assert set(RETRIEVAL_COLUMNS + ANSWER_COLUMNS) <= set(row) and row["n"] == "3"
        summary = json.loads((tmp_path / "reports" / f"tiny-bench-{strategy}-answer.json").read_text())["summary"]
        assert row["accuracy"] == f"{summary['accuracy']:.3f}" == "1.000" and row["f1"] == "1.000"
        assert row["abstention_recall"] == "1.000" and row["grounded"] == "1.000" and row["tokens"] == "100"
        assert row["hit@5"] == f"{summary['hit@5']:.3f}"
    uncached = functools.partial(run, reuse_replies=False)  # so only the report can spare the model
    for resume, asked in ((True, 0), (False, 3)):
        before = llm.calls
        strategy_table(
            [str(bench)],
            ["hybrid"],
            answer=True,
            answer_k=5,
            reports=tmp_path / "reports",
            resume=resume,
            run=uncached,
            echo=echoed.append,
        )
        assert llm.calls - before == asked


def test_retrieval_only_table_has_no_answer_columns(bench, tmp_path, embedder):
    run = functools.partial(run_eval, library_dir=tmp_path / "lib", embedder=embedder)
    table = rows(strategy_table([str(bench)], ["flat"], run=run, echo=lambda line: None))
    row = table["flat@tiny-bench"]
    assert "hit@12" in row and not set(ANSWER_COLUMNS) & set(row) and row["n"] == "3"
