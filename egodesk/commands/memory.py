"""`egodesk memory stats` and `egodesk forget`."""

from __future__ import annotations

import argparse
import json
import sys

from egodesk.core.timeutil import parse_iso


def cmd_memory_stats(args: argparse.Namespace) -> int:
    from egodesk.pipeline.library import Library

    rows = Library().memory_stats()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'footage':<28}{'kind':<14}{'view':<14}{'units':>8}{'vectors':>9}{'KB':>10}{'KB/min':>9}")
    for r in rows:
        per_min = f"{r['bytes_per_minute'] / 1024:.1f}" if r["bytes_per_minute"] is not None else "-"
        print(f"{r['title'][:27]:<28}{r['kind']:<14}{r['view']:<14}{r['units']:>8}{r['vectors']:>9}{r['bytes'] / 1024:>10.1f}{per_min:>9}")
    return 0


def _when(text: str | None, footage_start: float) -> float | None:
    """A time given as ISO-8601, or as seconds into the footage."""
    if text is None:
        return None
    try:
        return footage_start + float(text)
    except ValueError:
        return parse_iso(text)


def cmd_forget(args: argparse.Namespace) -> int:
    from egodesk.pipeline.library import Library

    library = Library()
    footage_id = library.find_footage(args.source)
    if footage_id is None:
        print(f"error: no footage {args.source!r} (see `egodesk footage`)", file=sys.stderr)
        return 2
    start = next(f.start for f in library.footage() if f.id == footage_id)
    try:
        lo, hi = _when(args.start, start), _when(args.end, start)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = library.forget(footage_id, lo, hi)
    what = "footage" if report.footage_deleted else "range"
    print(f"forgot {what}: {report.clips} clips, {report.units} memory units, {report.vectors} vectors, "
          f"{report.thumbnails} thumbnails", file=sys.stderr)
    return 0


def register(sub) -> None:
    p = sub.add_parser("memory", help="memory statistics")
    p.add_argument("action", choices=["stats"])
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_memory_stats)
    p = sub.add_parser("forget", help="remove a footage, or a time range of it, from everything")
    p.add_argument("source", help="footage id, title or path")
    p.add_argument("--from", dest="start", help="ISO time or seconds into the footage")
    p.add_argument("--to", dest="end", help="ISO time or seconds into the footage")
    p.set_defaults(func=cmd_forget)
