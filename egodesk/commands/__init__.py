"""The CLI's subcommands, one module per topic; each has `register(subparsers)`."""

import sys


def find_footage(library, name: str) -> int | None:
    """The id of the footage `name` (an id, a title or a path), or None once the user is told there is none."""
    footage_id = library.find_footage(name)
    if footage_id is None:
        print(f"error: no footage {name!r} (see `egodesk footage`)", file=sys.stderr)
    return footage_id
