"""`egodesk people`: the voices heard in the library, from the terminal.

`egodesk people list [--json]` shows each voice (id, name or "Voice N", "me" for the one you said is
yours and "me?" for the library's guess of it, how many footage it is heard in, its speech in seconds);
`egodesk people me ID` says a voice is yours (its lines then say "me"), `egodesk people name ID NAME`
names one,
`egodesk people merge A B` makes B part of A (one person heard as two), `egodesk people split ID FOOTAGE`
makes what voice ID was heard as in that footage a voice of its own (someone else taken for them),
`egodesk people forget ID` deletes
a person's voice print and name (their words stay, unattributed). A refused change is told on stderr with
its reason (exit status 2) and changes nothing (`memory.people` says the rules).
"""

from __future__ import annotations

import argparse
import sys

from egodesk.commands import print_rows


def _row(v) -> str:
    me = ("me " if v.me_said else "me?") if v.me else "   "
    return f"{v.id:<4} {me} {v.label:<24} {v.footage:>4} footage {v.seconds:>9.1f} s"


def cmd_people(args: argparse.Namespace) -> int:
    from egodesk.pipeline.library import Library

    library = Library()
    try:
        if args.action == "list":
            print_rows(library.voices(), _row, args.json, "voice")
            return 0
        if args.action == "name":
            if len(args.args) < 2:
                print("error: say which voice and its name: egodesk people name ID NAME", file=sys.stderr)
                return 2
            print(_row(library.name_voice(_id(args.args[0]), " ".join(args.args[1:]))))
            return 0
        if args.action == "me":
            if len(args.args) != 1:
                print("error: say which voice is yours: egodesk people me ID", file=sys.stderr)
                return 2
            print(_row(library.claim_voice(_id(args.args[0]))))
            return 0
        if args.action == "merge":
            if len(args.args) != 2:
                print("error: say which two voices: egodesk people merge A B (B becomes part of A)", file=sys.stderr)
                return 2
            print(_row(library.merge_voices(_id(args.args[0]), _id(args.args[1]))))
            return 0
        if args.action == "split":
            if len(args.args) != 2:
                print("error: say which voice and footage: egodesk people split ID FOOTAGE", file=sys.stderr)
                return 2
            print(_row(library.split_voice(_id(args.args[0]), _id(args.args[1], "footage", "egodesk footage"))))
            return 0
        if len(args.args) != 1:
            print("error: say which voice: egodesk people forget ID", file=sys.stderr)
            return 2
        lines = library.forget_voice(_id(args.args[0]))
        print(f"voice {args.args[0]} forgotten; {lines} line{'s' if lines != 1 else ''} no longer say who spoke")
        return 0
    except ValueError as exc:  # PeopleError, or an id that is not a number
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        library.close()


def _id(text: str, kind: str = "voice", listed_by: str = "egodesk people list") -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a {kind} id (see `{listed_by}`)") from None


def register(sub) -> None:
    p = sub.add_parser("people", help="the voices heard: list, name, merge, split or forget them")
    p.add_argument("action", choices=["list", "me", "name", "merge", "split", "forget"], nargs="?", default="list")
    p.add_argument(
        "args", nargs="*", help="me: ID (your own voice); name: ID NAME; merge: A B (B into A); split: ID FOOTAGE; forget: ID"
    )
    p.add_argument("--json", action="store_true", help="with list: as JSON")
    p.set_defaults(func=cmd_people)
