"""Every rule of the answer path switched off in turn, on every set: the answers right with the rule and
without it, per set and category (docs/answering.md's rule table).

    EGODESK_THREADS=2 .venv/bin/python benchmarks/ablation.py [--sets clean,real,locomo,epic-dev]
        [--rules NAME,...] [--limit 200] [--named] [--json REPORT]

Each set is answered through the app's ask path with every rule on, then once per rule with that rule
switched off (the rule's function replaced by what the path does without it). Replies come from each
library's reply cache (`egodesk.eval.reply_cache`: greedy replies are a function of the model and the
prompt), so switching off a rule that checks or mends a reply costs no model time, and one that shapes
the prompt pays only for the prompts it changes. A rule that can only act on open answers is not run on
epic-dev, whose questions all have options. The test days use the libraries `test_day.py` builds (the
same cache; `--named`: the copies `test_day.py --named` named, where the rules about people act); the
shared benchmarks `egodesk eval`'s scratch libraries.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from common import EPIC_DEV, LOCOMO
from test_day import ask_all, built_library, library_settings, named_copy
from testday.make_day import DAY, make_day, plan_of
from testday.questions import QUESTIONS, load_questions
from testday.real_day import QUESTIONS as REAL_QUESTIONS

from egodesk.eval.reply_cache import ReplyCache
from egodesk.eval.runner import run_eval
from egodesk.pipeline import ask
from egodesk.reasoning import answer_checks, prompt, relative_dates
from egodesk.retrieval import question

SETS = ("locomo", "real", "clean", "epic-dev")
NEVER = re.compile(r"(?!)")


@dataclass(frozen=True)
class Rule:
    name: str
    where: str
    off: Callable[[], list]  # the patches that switch it off
    open_only: bool = True  # acts on open answers only (not on a pick among options)


RULES = [
    Rule(
        "empty window",
        "pipeline/ask.py: empty_window",
        lambda: [mock.patch.object(ask, "empty_window", lambda m, q: None)],
        False,
    ),
    Rule(
        "when a named person was heard: noted",
        "pipeline/ask.py: noted",
        lambda: [mock.patch.object(ask, "noted", lambda met, analysis: [])],
    ),
    Rule(
        "named voices heard beside a unit",
        "reasoning/facts.py: with_voices",
        lambda: [mock.patch.object(ask, "with_voices", lambda evidence, voices: evidence)],
    ),
    Rule(
        "when: the moment's day and time",
        "reasoning/answer_checks.py: with_when",
        lambda: [mock.patch.object(ask, "with_when", lambda a, c=None, n=(): a.text)],
    ),
    Rule(
        "a stated time is not the moment's",
        "retrieval/question.py: asks_stated_time",
        lambda: [mock.patch.object(question, "_STATED_TIME", NEVER)],
    ),
    Rule(
        "answer held by a line shown",
        "reasoning/answer_checks.py: held",
        lambda: [mock.patch.object(answer_checks, "held", lambda t, s: True)],
    ),
    Rule(
        "no bare letter or id",
        "reasoning/answer_checks.py: BARE_ANSWER",
        lambda: [mock.patch.object(answer_checks, "BARE_ANSWER", NEVER)],
    ),
    Rule(
        "not another's words about themselves",
        "reasoning/speakers.py: misattributed",
        lambda: [mock.patch.object(answer_checks, "misattributed", lambda *a: None)],
    ),
    Rule(
        "unsure guesses hidden",
        "reasoning/prompt.py: _without_unrelated_guesses",
        lambda: [mock.patch.object(prompt, "_without_unrelated_guesses", lambda text, terms: text)],
        False,
    ),
    Rule(
        "right after/before note",
        "reasoning/prompt.py: _role_note",
        lambda: [mock.patch.object(prompt, "_role_note", lambda i, s: "")],
        False,
    ),
    Rule(
        "relative dates dated",
        "reasoning/relative_dates.py: annotate",
        lambda: [mock.patch.object(relative_dates, "annotate", lambda text, at: text)],
        False,
    ),
]


class Day:
    """A test day's library, opened once (the import's code may change while the run goes on), its
    answers from the library's reply cache."""

    def __init__(self, day: str, named: bool):
        plan = plan_of(day)
        paths = make_day(plan=plan, log=lambda line: None)
        self.library, _, _ = built_library(paths, library_settings("llm-quality", True), log=lambda line: None)
        if named:
            self.library = named_copy(self.library, plan, log=lambda line: None, reuse=True)
        self.library.engines.llm = ReplyCache(self.library.engines.llm, self.library.paths.root / "llm-replies.sqlite")
        self.questions = load_questions(QUESTIONS if plan is DAY else REAL_QUESTIONS)

    def scores(self) -> dict[str, list[int]]:
        """Each category's [right, questions], asked through `Library.ask`."""
        scores: dict[str, list[int]] = {}
        for r in ask_all(self.library, self.questions, None, log=lambda line: None):
            for name in ("all", r.category):
                row = scores.setdefault(name, [0, 0])
                row[0] += int(bool(r.correct))
                row[1] += 1
        return scores


def bench_scores(folder: Path, limit: int) -> dict[str, list[float]]:
    """Each category's [score, questions]: token F1 where answers are open (LoCoMo's answerable
    categories, and its whole), else accuracy (options; LoCoMo's adversarial questions, rightly abstained)."""
    report = run_eval(folder, "auto", answer=True, limit=limit, quiet=True)
    scores: dict[str, list[float]] = {}
    for name, row in {"all": report["summary"], **report["by_category"]}.items():
        score = row["f1"] if row.get("f1") is not None else row.get("accuracy")
        scores[name] = [round(float(score or 0.0), 3), row["questions"]]
    return scores


def scorer(name: str, limit: int, named: bool) -> tuple[Callable[[], dict], Callable[[], None]]:
    """The set's scoring run, and what closes it."""
    if name in ("clean", "real"):
        day = Day(name, named)
        return day.scores, day.library.close
    folder = LOCOMO if name == "locomo" else EPIC_DEV
    return (lambda: bench_scores(folder, limit)), (lambda: None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS), help="comma separated, of: " + ", ".join(SETS))
    parser.add_argument("--rules", help="comma separated rule names (default: all)")
    parser.add_argument("--limit", type=int, default=200, help="questions of each shared benchmark")
    parser.add_argument("--named", action="store_true", help="the test days with their voices named (test_day.py --named)")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args(argv)
    sets = args.sets.split(",")
    rules = [r for r in RULES if args.rules is None or r.name in args.rules.split(",")]
    say = lambda line: print(line, flush=True)  # noqa: E731
    # Set by set, the JSON rewritten after each run: a stopped run keeps every figure it measured.
    report: dict[str, dict] = {"with every rule": {}, **{rule.name: {} for rule in rules}}
    scorers = {s: scorer(s, args.limit, args.named) for s in sets}  # each library opened now, as the code that built it
    for s in sets:
        scores_of, close = scorers[s]
        report["with every rule"][s] = scores_of()
        say(f"{s}, with every rule: {cell(report['with every rule'][s])}")
        for rule in rules:
            if rule.open_only and s == "epic-dev":
                continue
            with ExitStack() as stack:
                for patch in rule.off():
                    stack.enter_context(patch)
                report[rule.name][s] = scores_of()
            say(f"{s}, without {rule.name}: {cell(report[rule.name][s])}")
            if args.json:
                args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
        close()
    say("")
    say(table(report, sets))
    say("")
    for line in changed_categories(report, sets):
        say(line)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


def cell(scores: dict | None) -> str:
    if scores is None:
        return "n/a"
    right, n = scores["all"]
    return f"{int(right)}/{n}" if isinstance(right, int) else f"{right:.3f}"


def table(report: dict, sets: list[str]) -> str:
    """Rules by sets: the figure with the rule switched off, and its change from every rule on."""
    base = report["with every rule"]
    lines = [f"| rule off | {' | '.join(sets)} |", "|---|" + "---|" * len(sets)]
    for name, run in report.items():
        row = []
        for s in sets:
            if s not in run or s not in base:
                row.append("n/a")
            elif name == "with every rule":
                row.append(cell(run[s]))
            else:
                delta = run[s]["all"][0] - base[s]["all"][0]
                row.append(f"{cell(run[s])} ({delta:+d})" if isinstance(delta, int) else f"{cell(run[s])} ({delta:+.3f})")
        lines.append(f"| {name} | {' | '.join(row)} |")
    return "\n".join(lines)


def changed_categories(report: dict, sets: list[str]) -> list[str]:
    """Each category a rule's absence changed, per set: never judged on the whole alone."""
    base = report["with every rule"]
    out = []
    for name, run in report.items():
        for s in sets:
            for category, (score, n) in (run.get(s) or {}).items() if s in base else ():
                before = base[s].get(category, [score, n])[0]
                if category != "all" and score != before:
                    out.append(f"without {name}: {s} {category} {before} -> {score} (of {n})")
    return out


if __name__ == "__main__":
    raise SystemExit(main())
