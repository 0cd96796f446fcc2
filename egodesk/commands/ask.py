"""`egodesk ask` and `egodesk eval`."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from egodesk.core.timeutil import format_ts, parse_iso


def cmd_ask(args: argparse.Namespace) -> int:
    from egodesk.perception.llm import LLMError
    from egodesk.pipeline.library import Library

    library = Library()
    streamed: list[str] = []

    def say(piece: str) -> None:  # the answer's words as the model writes them
        streamed.append(piece)
        print(piece, end="", flush=True)

    try:
        asked_at = parse_iso(args.at) if args.at else None
        answer = library.ask(
            args.question,
            options=args.options,
            asked_at=asked_at,
            strategy=args.strategy,
            k=args.k,
            on_text=None if args.json else say,
        )
    except (ValueError, KeyError, LLMError) as exc:
        print(f"{chr(10) if streamed else ''}error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(asdict(answer), indent=2, default=str))
        return 0
    said = "".join(streamed)
    if said and answer.text.startswith(said):
        print(answer.text[len(said) :])  # what the final answer adds (the day and time of a "when" answer)
    else:
        if said:
            print(f"\n(withdrawn: {answer.extra.get('unsupported') or 'the evidence does not support it'})")
        print(answer.text)
    if answer.abstained:
        print("(abstained: the evidence does not support an answer)")
    if "window" in answer.extra:
        window = answer.extra["window"]
        print(f"(searched only {window['label']}: {format_ts(window['start'])} to {format_ts(window['end'])})")
    if "recalled" in answer.extra:
        recalled = answer.extra["recalled"]
        print(
            f"(no footage from {recalled['label']}, {format_ts(recalled['start'])} to {format_ts(recalled['end'])}: searched what was said later)"
        )
    cited = set(answer.cited)
    print("\nevidence (cited first, then by relevance; #rank in retrieval):")
    for ev in answer.evidence:
        mark = "*" if ev.unit_id in cited else " "
        print(f" {mark} #{ev.rank:<2} {format_ts(ev.start)} {ev.source[:24]:<24} {ev.kind:<10} {ev.text[:90]}")
    timing = ", ".join(f"{k} {v:.2f}s" for k, v in answer.timings.items())
    print(f"\n{answer.tokens} tokens to the reasoner; {timing}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from egodesk.commands.progress import ProgressPrinter
    from egodesk.eval.runner import report_table, run_eval

    # Importing, building memories and answering take minutes to hours: show where the run is.
    printer = ProgressPrinter()
    try:
        data = run_eval(
            args.bench,
            args.strategy,
            k=args.k,
            answer=args.answer,
            limit=args.limit,
            report=args.report,
            library_dir=args.scratch,
            resume=args.resume,
            memories=tuple(args.memories or ()),
            reuse_replies=not args.ask_again,
            progress=printer,
            quiet=True,
        )
    except (FileNotFoundError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        printer.close()  # before the table, which would otherwise share the bar's line
    print(report_table(data))
    return 0


def register(sub) -> None:
    from egodesk.eval.runner import LLM_MEMORIES
    from egodesk.retrieval.registry import strategy_names

    p = sub.add_parser("ask", help="ask a question about your footage")
    p.add_argument("question")
    p.add_argument("--options", nargs="+", help="multiple-choice options")
    p.add_argument("--at", help="when the question is asked (ISO time); later memory is not used")
    p.add_argument("--strategy", choices=strategy_names())
    p.add_argument("--k", type=int)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ask)
    p = sub.add_parser("eval", help="run a benchmark (memory.jsonl + questions.jsonl) through a strategy")
    p.add_argument("bench", help="benchmark folder")
    p.add_argument("--strategy", default="auto", choices=strategy_names())
    p.add_argument("--k", type=int, default=12)
    p.add_argument("--answer", action="store_true", help="also answer with the LLM (slow on CPU)")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument("--report", help="write the JSON report here")
    p.add_argument("--scratch", help="library folder for the benchmark (default: a cached one per benchmark)")
    p.add_argument("--resume", action="store_true", help="keep the questions --report already holds from the same run")
    p.add_argument(
        "--ask-again",
        action="store_true",
        help="send every answer prompt to the model, even one this benchmark library's runs already had answered",
    )
    p.add_argument(
        "--memories",
        nargs="+",
        choices=LLM_MEMORIES,
        metavar="MEMORY",
        help="first build these LLM memories (records, atomic) for the questions' sources (hours on a CPU "
        "for a whole benchmark: combine with --limit)",
    )
    p.set_defaults(func=cmd_eval)
