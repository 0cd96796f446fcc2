"""`egodesk search TEXT`: the words and phrases found in the library, by footage and time."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from egodesk.core.timeutil import clock, format_ts


def marked(text: str, marks: list[tuple[int, int]], start: str, end: str) -> str:
    """`text` with each marked span between `start` and `end`."""
    out, at = [], 0
    for a, b in marks:
        out += [text[at:a], start, text[a:b], end]
        at = b
    return "".join(out) + text[at:]


def cmd_search(args: argparse.Namespace) -> int:
    from egodesk.pipeline.library import Library

    if args.limit < 1:
        print("error: --limit must be at least 1", file=sys.stderr)
        return 2
    library = Library()
    result = library.search(args.text, args.limit)
    if args.json:
        hits = [{**asdict(h), "words": h.words} for h in result.hits]
        print(json.dumps({**asdict(result), "hits": hits}, indent=2, ensure_ascii=False))
        return 0
    # Bold on a terminal; brackets where the output goes to a file or another program.
    start, end = ("\x1b[1m", "\x1b[0m") if sys.stdout.isatty() else ("[", "]")
    footage = None
    for hit in result.hits:
        if hit.footage_id != footage:
            footage = hit.footage_id
            print(f"{hit.title}  ({format_ts(hit.start - hit.offset)})")
        line = marked(hit.text, hit.marks, start, end).replace("\n", " ").replace("\r", " ")
        print(f"  {clock(hit.offset)}  {hit.kind:<7}  {line}")
    notes = [f"{len(result.hits)} hits" + (" (more matched: add words or quote a phrase)" if result.more else "")]
    if result.alike:
        notes.append("also heard as: " + "; ".join(f"{w} ~ {', '.join(a)}" for w, a in result.alike.items()))
    if result.indexing:
        notes.append(f"{result.indexing} footage still indexing: what they hold so far is searched")
    print("\n".join(notes), file=sys.stderr)
    return 0 if result.hits else 1


def register(sub) -> None:
    p = sub.add_parser("search", help="find words and phrases in what was said, shown, tagged and remembered")
    p.add_argument("text", help='words (also matched when heard alike) and "quoted phrases" (exact)')
    p.add_argument("--limit", type=int, default=200, help="at most this many hits (default 200)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--library", metavar="DIR", default=argparse.SUPPRESS, help="library folder")
    p.set_defaults(func=cmd_search)
