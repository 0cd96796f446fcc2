"""The CLI's subcommands, one module per topic; each has `register(subparsers)`."""

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any


def find_footage(library, name: str) -> int | None:
    """The id of the footage `name` (an id, a title or a path), or None once the user is told there is none."""
    footage_id = library.find_footage(name)
    if footage_id is None:
        print(f"error: no footage {name!r} (see `egodesk footage`)", file=sys.stderr)
    return footage_id


def print_rows(rows: Sequence[Any], line: Callable[[Any], str], as_json: bool, noun: str) -> None:
    """A listing: the rows (dataclasses) as JSON on stdout, or one `line(row)` each on stdout and their
    count on stderr ("1 voice", "3 voices")."""
    if as_json:
        print(json.dumps([asdict(row) for row in rows], indent=2, ensure_ascii=False))
        return
    for row in rows:
        print(line(row))
    print(f"{len(rows)} {noun}{'s' if len(rows) != 1 else ''}", file=sys.stderr)
