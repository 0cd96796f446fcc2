"""The test day's questions: the benchmark question format (../shared/benchmarks/FORMAT.md), parsed by
egodesk's own loader, plus `accept`: the answers the judge takes (see judge.py), and optionally `heard`:
the key words the question depends on hearing (hearing.unheard tells which recognition missed).

A question file that contradicts itself fails the load with its line: an answerable question without
accepted answers or evidence could never be scored right, an unanswerable one with them is mislabelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from egodesk.eval.benchmark import BenchmarkError, BenchQuestion, _question, _rows

QUESTIONS = Path(__file__).resolve().parent / "questions.jsonl"


@dataclass
class DayQuestion:
    bench: BenchQuestion
    accept: list[str | list[str]]
    heard: list[str] = field(default_factory=list)


def load_questions(path: Path = QUESTIONS) -> list[DayQuestion]:
    out, seen = [], set()
    for number, row in _rows(Path(path)):
        where = f"{Path(path).name}:{number}"
        try:
            question = _question(row)
        except (KeyError, TypeError, ValueError) as exc:
            raise BenchmarkError(f"{where}: bad field ({type(exc).__name__}: {exc})") from exc
        accept = row.get("accept") or []
        if not isinstance(accept, list) or not all(isinstance(a, str) or (isinstance(a, list) and a) for a in accept):
            raise BenchmarkError(f"{where}: accept must be a list of strings or lists of strings")
        if question.id in seen:
            raise BenchmarkError(f"{where}: id {question.id} repeats")
        if question.asked_at is None:
            raise BenchmarkError(f"{where}: asked_at is required (the questions say 'yesterday', 'now')")
        if question.unanswerable and (accept or question.evidence):
            raise BenchmarkError(f"{where}: an unanswerable question has no accepted answers or evidence")
        if not question.unanswerable and not (accept and question.evidence):
            raise BenchmarkError(f"{where}: an answerable question needs accepted answers and evidence moments")
        heard = row.get("heard") or []
        if not isinstance(heard, list) or not all(isinstance(h, str) for h in heard):
            raise BenchmarkError(f"{where}: heard must be a list of strings")
        seen.add(question.id)
        out.append(DayQuestion(question, accept, heard))
    return out


def interleaved(questions: list[DayQuestion]) -> list[DayQuestion]:
    """Round robin over the categories (each in file order), so that the first N questions (a limited
    run, or one stopped early) cover every class rather than the first few."""
    groups: dict[str, list[DayQuestion]] = {}
    for q in questions:
        groups.setdefault(q.bench.category, []).append(q)
    rounds = max((len(g) for g in groups.values()), default=0)
    return [g[i] for i in range(rounds) for g in groups.values() if i < len(g)]
