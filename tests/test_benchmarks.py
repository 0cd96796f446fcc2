"""benchmarks/run.py on tiny sizes: it runs the chosen benchmarks as their own processes and prints one
table whose rows carry numbers (the whole run takes minutes to an hour: never here)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from benchmarks.common import Figure, Reference, Report, format_table
from tests.conftest import REPO


def run_bench(tmp_path, *args: str) -> tuple[str, dict]:
    out = tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "run.py"), *args, "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout, json.loads(out.read_text(encoding="utf-8"))


def table_rows(stdout: str) -> dict[str, list[str]]:
    """The final table's rows by figure name: [benchmark, figure, value, unit, paper, ratio]."""
    table = stdout[stdout.rindex("| benchmark") :]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.splitlines() if line.startswith("|")]
    return {r[1]: r for r in rows[2:]}


def test_index_scale_through_run_prints_the_table_with_the_command(tmp_path):
    stdout, data = run_bench(tmp_path, "--only", "index-scale", "--args", "index-scale", "--units 2000 --queries 20")
    assert ".venv/bin/python benchmarks/index_scale.py --units 2000 --queries 20" in stdout.replace(
        sys.executable, ".venv/bin/python"
    )
    assert "load average" in stdout
    rows = table_rows(stdout)
    build = next(r for name, r in rows.items() if name.startswith("build (SQLite + index"))
    assert build[0] == "index-scale" and build[3] == "s per 10k units" and float(build[2]) > 0
    figures = {f["figure"]: f for f in data["figures"]}
    shown = {name: float(rows[name][2].replace(",", "")) for name in ("search p50", "search p95", "recall@36", "load + verify")}
    assert 0 < shown["search p50"] <= shown["search p95"] and shown["load + verify"] > 0  # measured, in order
    for name, value in shown.items():  # the table prints the figures measured, rounded
        assert value == pytest.approx(figures[name]["value"], rel=0.01, abs=0.01), name
    assert 0.5 < figures["recall@36"]["value"] <= 1.0
    assert all(math.isfinite(f["value"]) for f in data["figures"])
    assert data["commands"][0]["rc"] == 0 and data["mode"] == "full"


def test_retrieval_latency_reports_p50_and_p95_per_strategy_and_size(tmp_path):
    strategies = "flat,hybrid,records,carve,auto"
    stdout, data = run_bench(
        tmp_path,
        "--only",
        "retrieval-latency",
        "--args",
        "retrieval-latency",
        f"--sizes 1300 --queries 2 --strategies {strategies} --cache {tmp_path / 'cache'}",
    )
    figures = {f["figure"]: f for f in data["figures"]}
    for name in strategies.split(","):
        for stat in ("p50", "p95"):
            assert figures[f"{name} {stat} @ 1300"]["value"] > 0, name
    records = figures["records p50 @ 1300"]
    assert records["paper"] == 1700.0 and records["source"] == "Imprint"
    assert "build synthetic library @ 1300" in figures
    row = table_rows(stdout)["records p50 @ 1300"]
    assert row[4] == "1,700 (Imprint)" and row[5].endswith("x")
    assert "Imprint: 1.7 s retrieval per query" in stdout


def test_table_shows_paper_figure_and_ratio():
    report = Report("demo")
    report.add("tokens per question", 900, "tokens", Reference(3600.0, "parent retrieval", "3,600 tokens per query"))
    report.add("file", 0.004, "MB")
    table = format_table([*report.figures, Figure("demo", "p50", 12.5, "ms", note="10k units")])
    lines = table.splitlines()
    assert [c.strip() for c in lines[0].strip("|").split("|")] == ["benchmark", "figure", "value", "unit", "paper", "ratio"]
    assert "|   900 | tokens | 3,600 (parent retrieval) | 0.25x |" in lines[2]
    assert "| 0.004 | MB     | -" in lines[3]
    assert "p50 (10k units)" in lines[4] and "12.5" in lines[4]


def test_every_ablation_rule_switches_off_a_function_that_exists(monkeypatch):
    """A rule renamed in the answer path must not leave the ablation patching a name that is gone (the
    patch would fail only in the hour-long run)."""
    from contextlib import ExitStack

    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import ablation

    for rule in ablation.RULES:
        with ExitStack() as stack:
            for patch in rule.off():
                stack.enter_context(patch)
