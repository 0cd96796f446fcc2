"""`egodesk star`, `unstar`, `starred`, `notes` and `export`: the moments a person keeps, from the terminal.

A moment is a footage (id, title or path) and a start and end in seconds into it ("75", "1:15",
"0:01:15.5"), as the player shows them. A refused moment or note is told on stderr with its reason
(exit status 2) and changes nothing.
"""

from __future__ import annotations

import argparse
import sys

from egodesk.commands import find_footage, print_rows
from egodesk.core.timeutil import clock, parse_clock


def _moment(library, args: argparse.Namespace) -> tuple[int, float, float] | None:
    """(footage id, wall-clock start, end) of the moment the arguments name, or None once told why not."""
    footage_id = find_footage(library, args.footage)
    if footage_id is None:
        return None
    try:
        start, end = parse_clock(args.start), parse_clock(args.end)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    origin = next(f.start for f in library.footage() if f.id == footage_id)
    return footage_id, origin + start, origin + end


def _run(action) -> int:
    """Run a library call; a refusal (`KeepError`, `MediaError`: both ValueError) is printed, status 2."""
    from egodesk.pipeline.library import Library

    library = Library()
    try:
        return action(library)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        library.close()


def _line(k) -> str:
    text = f"  {k.text}" if k.text else ""
    return f"{k.kind} {k.id:<4} {k.title}  {clock(k.offset)}-{clock(k.offset + k.end - k.start)}{text}"


def _print_kept(library, kinds: tuple[str, ...], as_json: bool) -> int:
    print_rows(library.kept(kinds), _line, as_json, " and ".join(kinds))
    return 0


def cmd_star(args: argparse.Namespace) -> int:
    def star(library) -> int:
        moment = _moment(library, args)
        if moment is None:
            return 2
        star_id = library.star(*moment)
        print(_line(next(k for k in library.kept(("star",)) if k.id == star_id)))
        return 0

    return _run(star)


def cmd_unstar(args: argparse.Namespace) -> int:
    def unstar(library) -> int:
        library.unstar(args.id)
        return 0

    return _run(unstar)


def cmd_starred(args: argparse.Namespace) -> int:
    return _run(lambda library: _print_kept(library, ("star",), args.json))


def cmd_notes(args: argparse.Namespace) -> int:
    def notes(library) -> int:
        if args.action == "list":
            return _print_kept(library, ("note",), args.json)
        if args.action == "add":
            moment = _moment(library, args)
            if moment is None:
                return 2
            note_id = library.add_note(*moment, args.text)
            print(_line(next(k for k in library.kept(("note",)) if k.id == note_id)))
        elif args.action == "edit":
            library.edit_note(args.id, args.text)
        else:
            library.delete_note(args.id)
        return 0

    return _run(notes)


def cmd_export(args: argparse.Namespace) -> int:
    def export(library) -> int:
        moment = _moment(library, args)
        if moment is None:
            return 2
        report = library.export(*moment, args.out, overwrite=args.force)
        how = "stream copy" if report.copied else f"re-encoded: {report.why}"
        print(f"{report.path}  ({how}; {report.subtitles} subtitle lines; {report.seconds:.1f} s)")
        return 0

    return _run(export)


def _moment_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("footage", help="footage id, title or path")
    p.add_argument("start", help="seconds into the footage: 75, 1:15 or 0:01:15.5")
    p.add_argument("end", help="seconds into the footage")


def register(sub) -> None:
    p = sub.add_parser("star", help="star a moment of a footage")
    _moment_arguments(p)
    p.set_defaults(func=cmd_star)
    p = sub.add_parser("unstar", help="remove a star (its id, from `egodesk starred`)")
    p.add_argument("id", type=int)
    p.set_defaults(func=cmd_unstar)
    p = sub.add_parser("starred", help="list the starred moments")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_starred)

    p = sub.add_parser("notes", help="list, add, edit or delete notes on moments (searchable, used to answer)")
    actions = p.add_subparsers(dest="action")
    listing = actions.add_parser("list", help="every note, in time order")
    listing.add_argument("--json", action="store_true")
    add = actions.add_parser("add", help="a note on a moment")
    _moment_arguments(add)
    add.add_argument("text")
    edit = actions.add_parser("edit", help="replace a note's text")
    edit.add_argument("id", type=int)
    edit.add_argument("text")
    delete = actions.add_parser("delete", help="delete a note")
    delete.add_argument("id", type=int)
    p.set_defaults(func=cmd_notes, action="list", json=False)

    p = sub.add_parser("export", help="save a moment as an MP4 file with its transcript as subtitles")
    _moment_arguments(p)
    p.add_argument("out", help="the .mp4 file to write")
    p.add_argument("--force", action="store_true", help="replace the file if it exists")
    p.set_defaults(func=cmd_export)
