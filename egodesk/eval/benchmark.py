"""The benchmark format (v1): a folder with memory.jsonl (timestamped entries) and questions.jsonl.

Times become wall-clock seconds at load, like everything else in egodesk. A malformed line fails the
load with its file and line number: a benchmark with a silently missing question would score wrong.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from egodesk.core.timeutil import parse_iso

MEMORY_FILE = "memory.jsonl"
QUESTIONS_FILE = "questions.jsonl"


class BenchmarkError(ValueError):
    pass


@dataclass(frozen=True)
class Window:
    """An annotated evidence moment of one source."""

    source: str
    start: float
    end: float


@dataclass(frozen=True)
class BenchEntry:
    id: str
    source: str
    start: float
    end: float
    kind: str
    text: str


@dataclass
class BenchQuestion:
    id: str
    question: str
    options: list[str] | None
    answer_idx: int | None
    answer: str | None
    asked_at: float | None
    sources: list[str] | None
    evidence: list[Window] = field(default_factory=list)
    category: str = ""
    unanswerable: bool = False

    @property
    def is_multiple_choice(self) -> bool:
        return bool(self.options)


@dataclass
class Benchmark:
    root: Path
    entries: list[BenchEntry]
    questions: list[BenchQuestion]

    @property
    def name(self) -> str:
        return self.root.name

    @property
    def memory_path(self) -> Path:
        return self.root / MEMORY_FILE

    def memory_hash(self) -> str:
        """sha256 of memory.jsonl: a library built from it can be reused while this is unchanged."""
        return hashlib.sha256(self.memory_path.read_bytes()).hexdigest()


def _rows(path: Path):
    if not path.is_file():
        raise BenchmarkError(f"{path}: missing (a benchmark folder holds {MEMORY_FILE} and {QUESTIONS_FILE})")
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise BenchmarkError(f"{path.name}:{number}: not JSON ({exc})") from exc


def _question(row: dict) -> BenchQuestion:
    asked = row.get("asked_at")
    return BenchQuestion(
        id=str(row["id"]),
        question=str(row["question"]),
        options=[str(o) for o in row["options"]] if row.get("options") else None,
        answer_idx=row.get("answer_idx"),
        answer=row.get("answer"),
        asked_at=parse_iso(asked) if asked else None,
        sources=[str(s) for s in row["sources"]] if row.get("sources") else None,
        evidence=[Window(str(e["source"]), parse_iso(e["start"]), parse_iso(e["end"])) for e in row.get("evidence") or []],
        category=str(row.get("category") or ""),
        unanswerable=bool(row.get("unanswerable", False)),
    )


def load_benchmark(root: str | Path, limit: int | None = None) -> Benchmark:
    """The benchmark in `root`; `limit` keeps the first N questions (all entries are kept)."""
    root = Path(root).expanduser().resolve()
    entries, questions = [], []
    for path, build, out in ((root / MEMORY_FILE, _entry, entries), (root / QUESTIONS_FILE, _question, questions)):
        for number, row in _rows(path):
            try:
                out.append(build(row))
            except (KeyError, TypeError, ValueError) as exc:
                raise BenchmarkError(f"{path.name}:{number}: bad field ({type(exc).__name__}: {exc})") from exc
    if limit is not None:
        questions = questions[:limit]
    return Benchmark(root, entries, questions)


def _entry(row: dict) -> BenchEntry:
    return BenchEntry(
        str(row["id"]),
        str(row["source"]),
        parse_iso(row["start"]),
        parse_iso(row["end"]),
        str(row.get("kind") or "caption"),
        str(row["text"]),
    )
