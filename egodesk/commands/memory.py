"""`egodesk memory stats` and `egodesk forget`."""

from __future__ import annotations

import argparse
import json
import sys

from egodesk.commands import find_footage
from egodesk.core.timeutil import parse_clock, parse_iso


def cmd_memory_stats(args: argparse.Namespace) -> int:
    from egodesk.memory.stats import footage_summary
    from egodesk.pipeline.library import Library

    library = Library()
    rows = library.memory_stats()
    summary = footage_summary(library.store, library.paths.indices, rows)
    if args.json:
        print(json.dumps({"units": rows, **summary}, indent=2))
        return 0
    print(
        "\n".join(
            _table(
                ["footage", "kind", "view", "units", "vectors", "KB", "KB/min"],
                [
                    [
                        r["title"][:28],
                        r["kind"],
                        r["view"],
                        str(r["units"]),
                        str(r["vectors"]),
                        _kb(r["bytes"]),
                        _kb(r["bytes_per_minute"]),
                    ]
                    for r in rows
                ],
                left=3,
            )
        )
    )
    print(
        "\nmemory growth per footage (records: raw extracted, kept = importance >= tau, consolidated entries; "
        "atomic statements per view)"
    )
    totals = summary["totals"]
    lines = [_growth_cells(f["title"][:28], f) for f in summary["footage"]]
    lines.append(_growth_cells(f"total ({totals['footage']} footage)", totals))
    print(
        "\n".join(
            _table(
                [
                    "footage",
                    "min",
                    "units",
                    "KB/min",
                    "text KB/min",
                    "records",
                    "kept",
                    "entries",
                    "prototypes",
                    "rec/entry",
                    "action",
                    "utterance",
                    "activity",
                    "conversation",
                ],
                lines,
            )
        )
    )
    return 0


def _growth_cells(name: str, f: dict) -> list[str]:
    g = f["records"]
    ratio = "-" if g["compression"] is None else f"{g['compression']:.2f}"
    return [
        name,
        f"{f['minutes']:.1f}",
        str(f["units"]),
        _kb(f["bytes_per_minute"]),
        _kb(f["text_bytes_per_minute"]),
        *(str(g[k]) for k in ("raw_records", "kept_records", "memory_entries", "prototypes")),
        ratio,
        *(str(n) for n in f["atomic"].values()),
    ]


def _kb(size: float | None) -> str:
    return "-" if size is None else f"{size / 1024:.1f}"


def _table(header: list[str], rows: list[list[str]], left: int = 1) -> list[str]:
    """Aligned columns: the first `left` to the left, the numbers to the right."""
    every = [header, *rows]
    widths = [max(len(row[i]) for row in every) for i in range(len(header))]
    return [
        "  ".join(cell.ljust(w) if i < left else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))).rstrip()
        for row in every
    ]


def _when(text: str | None, footage_start: float) -> float | None:
    """A time into the footage as `star` and `export` take it (75, 1:15, 0:01:15.5), or an ISO-8601 time."""
    if text is None:
        return None
    try:
        return footage_start + parse_clock(text)
    except ValueError:
        return parse_iso(text)


def cmd_forget(args: argparse.Namespace) -> int:
    from egodesk.pipeline.library import Library

    library = Library()
    footage_id = find_footage(library, args.source)
    if footage_id is None:
        return 2
    start = next(f.start for f in library.footage() if f.id == footage_id)
    try:
        lo, hi = _when(args.start, start), _when(args.end, start)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = library.forget(footage_id, lo, hi)
    what = "footage" if report.footage_deleted else "range"
    print(
        f"forgot {what}: {report.clips} clips, {report.units} memory units, {report.vectors} vectors, "
        f"{report.thumbnails} thumbnails",
        file=sys.stderr,
    )
    return 0


def register(sub) -> None:
    p = sub.add_parser("memory", help="memory statistics")
    p.add_argument("action", choices=["stats"])
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_memory_stats)
    p = sub.add_parser("forget", help="remove a footage, or a time range of it, from everything")
    p.add_argument("source", help="footage id, title or path")
    p.add_argument("--from", dest="start", help="a time into the footage (75, 1:15) or an ISO time")
    p.add_argument("--to", dest="end", help="a time into the footage (75, 1:15) or an ISO time")
    p.set_defaults(func=cmd_forget)
