"""What every benchmark shares: the figures it reports, timing and percentiles, the one table format,
the papers' reference figures, the JSON hand-over to `run.py`, and the cache folder for expensive inputs.

A benchmark collects `Figure`s in a `Report` and ends with `report.finish(args.json)`: it prints the
table and, when asked, writes the figures as JSON (what `run.py` reads back).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import platformdirs

from egodesk.core.paths import APP_NAME

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
EPIC_DEV = SHARED / "benchmarks" / "epic-dev"
LOCOMO = SHARED / "benchmarks" / "locomo"


@dataclass(frozen=True)
class Reference:
    """A figure one of the papers reports (or a goal), in the unit of the figure it is compared with."""

    value: float
    source: str  # short, shown in the table
    detail: str  # the figure as the source states it, shown under the table


IMPRINT_LATENCY_MS = Reference(1700.0, "Imprint", "Imprint: 1.7 s retrieval per query (EgoLifeQA, 7 days)")
# 109 MB for 7 days of EgoLife (Jake). EgoLife is 300 h from 6 wearers, ~50 h for one wearer over the
# 7 days: 109e6 B / 3,000 min = 36.3 KB per minute of footage (our derivation, not the paper's).
IMPRINT_KB_PER_MIN = Reference(
    109e6 / 3000 / 1000, "Imprint", "Imprint: 109 MB of memory for 7 days (~50 h of one wearer's footage: ~36 KB/min, derived)"
)
PARENT_TOKENS = Reference(3600.0, "parent retrieval", "parent retrieval: 3,600 tokens per query on average")
PARENT_KB_PER_MIN = Reference(66.07, "parent retrieval", "parent retrieval: 66.07 KB per minute of footage (textual memory)")
RTF_GOAL = Reference(0.25, "goal", "egodesk goal: transcripts + captions of 1 h of footage in <= 15 min on 2 cores")
MEMORY_RTF_GOAL = Reference(
    0.5, "goal", "egodesk goal: interaction records + atomic statements of dialogue-dense footage at <= 0.5x real time, 2 cores"
)


@dataclass
class Figure:
    benchmark: str
    figure: str
    value: float
    unit: str
    paper: float | None = None
    source: str = ""  # where the paper's figure comes from
    note: str = ""
    detail: str = ""  # the reference as its source states it

    @property
    def ratio(self) -> float | None:
        return self.value / self.paper if self.paper else None


class Report:
    """The figures of one benchmark run."""

    def __init__(self, benchmark: str):
        self.benchmark = benchmark
        self.figures: list[Figure] = []
        self.started = time.perf_counter()

    def add(self, figure: str, value: float, unit: str, paper: Reference | None = None, note: str = "") -> None:
        self.figures.append(
            Figure(
                self.benchmark,
                figure,
                float(value),
                unit,
                paper.value if paper else None,
                paper.source if paper else "",
                note,
                paper.detail if paper else "",
            )
        )

    def finish(self, json_path: str | os.PathLike | None = None) -> None:
        print(format_table(self.figures))
        print(format_references(self.figures), flush=True)
        if json_path:
            write_figures(json_path, self.figures, time.perf_counter() - self.started)


def add_output_args(parser: argparse.ArgumentParser) -> None:
    """The options every benchmark takes: a quick mode and the JSON hand-over."""
    parser.add_argument("--quick", action="store_true", help="smaller sizes (part of `run.py --quick`)")
    parser.add_argument("--json", help="also write the figures to this JSON file")


def add_embedder_args(parser: argparse.ArgumentParser) -> None:
    """The text embedder a retrieval benchmark loads (`--embedder`, a manifest role) and its `--threads`."""
    from egodesk.perception.embedder import DEFAULT_MODEL, MODEL_ID_OF_ROLE

    parser.add_argument(
        "--embedder",
        choices=list(MODEL_ID_OF_ROLE),
        default=DEFAULT_MODEL,
        help="manifest role of the text embedder (default: %(default)s)",
    )
    parser.add_argument("--threads", type=int, default=2, help="embedder threads (1 on a busy machine: llama.cpp threads spin)")


def write_figures(path: str | os.PathLike, figures: Iterable[Figure], seconds: float) -> None:
    Path(path).write_text(
        json.dumps({"seconds": round(seconds, 2), "figures": [asdict(f) for f in figures]}, indent=1), encoding="utf-8"
    )


def read_figures(path: str | os.PathLike) -> list[Figure]:
    return [Figure(**row) for row in json.loads(Path(path).read_text(encoding="utf-8"))["figures"]]


def number(value: float | None) -> str:
    """Three significant figures or so, thousands separated; '-' for none."""
    if value is None:
        return "-"
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 0.01 or value == 0:
        return f"{value:.2f}"
    return f"{value:.2g}"


COLUMNS = ("benchmark", "figure", "value", "unit", "paper", "ratio")


def format_table(figures: Iterable[Figure]) -> str:
    """One markdown table: benchmark, figure, value, unit, the paper's figure (with its source), ratio."""
    rows = [
        [
            f.benchmark,
            f.figure + (f" ({f.note})" if f.note else ""),
            number(f.value),
            f.unit,
            f"{number(f.paper)} ({f.source})" if f.paper is not None else "-",
            f"{f.ratio:.2f}x" if f.ratio is not None else "-",
        ]
        for f in figures
    ]
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(COLUMNS)]
    right = {2, 5}

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))) + " |"

    rule = "|" + "|".join("-" * (w + 1) + ":" if i in right else "-" * (w + 2) for i, w in enumerate(widths)) + "|"
    return "\n".join([line(list(COLUMNS)), rule, *(line(r) for r in rows)])


def format_references(figures: Iterable[Figure]) -> str:
    """The references the table compares with, as their sources state them."""
    return "\n".join(f"- {d}" for d in dict.fromkeys(f.detail for f in figures if f.detail))


def timed_ms(fn: Callable, items: Iterable) -> list[float]:
    """Milliseconds of `fn(item)` for each item."""
    out = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - start) * 1000)
    return out


def median_ms(action: Callable[[], object], repeat: int) -> float:
    """The median milliseconds of `repeat` calls of `action`."""
    return float(np.median(timed_ms(lambda _: action(), range(repeat))))


def p50_p95(values: Iterable[float]) -> tuple[float, float]:
    data = np.asarray(list(values), dtype=np.float64)
    if not len(data):
        return 0.0, 0.0
    return float(np.percentile(data, 50)), float(np.percentile(data, 95))


def cache_dir(name: str, **params) -> Path:
    """A folder under the user cache (~/.cache/egodesk/bench/) named by what was built and with which
    parameters: a rerun with the same parameters finds it, other parameters get their own."""
    key = re.sub(r"[^A-Za-z0-9._]+", "_", "-".join(f"{k}{v}" for k, v in sorted(params.items())))
    if len(key) > 80:
        key = hashlib.sha256(key.encode()).hexdigest()[:16]
    return platformdirs.user_cache_path(APP_NAME) / "bench" / f"{name}-{key}"
