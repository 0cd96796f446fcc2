"""`egodesk people`: the voices heard and the faces seen in the library, from the terminal.

`egodesk people list [--json]` shows each voice (id, name or "Voice N", "me" for the one you said is
yours and "me?" for the library's guess of it, how many footage it is heard in, its speech in seconds);
`egodesk people me ID` says a voice is yours (its lines then say "me"), `egodesk people name ID NAME`
names one,
`egodesk people merge A B` makes B part of A (one person heard as two), `egodesk people split ID FOOTAGE`
makes what voice ID was heard as in that footage a voice of its own (someone else taken for them),
`egodesk people said LINE ID|none` says who said one transcript line (`egodesk clips FOOTAGE` shows each
line's id after its time; "none": someone else, the line then names nobody), kept through reindexing,
`egodesk people forget ID` deletes
a person's voice print and name (their words stay, unattributed). A refused change is told on stderr with
its reason (exit status 2) and changes nothing (`memory.people` says the rules).

Faces are listed after the voices, each id written with an F ("F3": a face's ids are its own, not a
voice's); `name`, `merge` and `forget` take such ids the same way (`memory.faces`). A face and a voice
cannot be merged: a voice print and a face print are not comparable, and who is who across them is the
person's to say by giving both the same name.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from egodesk.commands import print_rows
from egodesk.core.timeutil import format_ts

FACE = "F"  # memory.faces.FACE_PREFIX, without importing the memory layer into every command's start-up


def _row(v) -> str:
    me = ("me " if v.me_said else "me?") if v.me else "   "
    return f"{v.id:<4} {me} {v.label:<24} {v.footage:>4} footage {v.seconds:>9.1f} s"


def _face_row(f) -> str:
    return f"{FACE}{f.id:<3}     {f.label:<24} {f.footage:>4} footage {f.sightings:>9} seen"


def _list(library, as_json: bool) -> None:
    """The voices, then the faces; as JSON, one list whose rows say their `kind`."""
    voices, faces = library.voices(), library.faces()
    if as_json:
        rows = [{"kind": "voice", **asdict(v)} for v in voices] + [{"kind": "face", **asdict(f)} for f in faces]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    print_rows(voices, _row, False, "voice")
    print_rows(faces, _face_row, False, "face")


def _face_action(library, action: str, ids: list[str], rest: list[str]) -> int:
    """name / merge / forget of faces (every id an F id)."""
    numbers = [_id(text[len(FACE) :], "face") for text in ids]
    if action == "name":
        print(_face_row(library.name_face(numbers[0], " ".join(rest))))
    elif action == "merge":
        print(_face_row(library.merge_faces(numbers[0], numbers[1])))
    elif action == "forget":
        count = library.forget_face(numbers[0])
        print(f"face {ids[0]} forgotten; {count} sighting{'s' if count != 1 else ''} no longer say who was seen")
    else:
        raise ValueError(f"`egodesk people {action}` is for voices; {ids[0]} is a face")
    return 0


def _is_face(text: str) -> bool:
    return text[:1].upper() == FACE and text[1:].isdigit()


def cmd_people(args: argparse.Namespace) -> int:
    from egodesk.pipeline.library import Library

    library = Library()
    try:
        if args.action == "list":
            _list(library, args.json)
            return 0
        code = _change(library, args)
        if code == 0 and args.action != "forget":  # a forget has already cleared every memory of the name
            moments = library.refresh_memories()
            if moments:
                print(f"{moments} moment{'s' if moments != 1 else ''} described again with the new names")
        return code
    except ValueError as exc:  # PeopleError, or an id that is not a number
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        library.close()


def _change(library, args: argparse.Namespace) -> int:
    """One change to the voices or faces; the lines say it at once (the memories follow)."""
    ids = args.args[: 2 if args.action == "merge" else 1]  # split's second is a footage id
    if any(_is_face(text) for text in ids):
        if args.action == "merge" and not all(_is_face(text) for text in ids):
            raise ValueError("a voice and a face cannot be merged: give them the same name instead")
        if len(args.args) < (2 if args.action in ("merge", "name") else 1):
            print(f"error: say which faces: egodesk people {args.action} {FACE}ID ...", file=sys.stderr)
            return 2
        return _face_action(library, args.action, ids, args.args[1:])
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
    if args.action == "said":
        return _said(library, args.args)
    if len(args.args) != 1:
        print("error: say which voice: egodesk people forget ID", file=sys.stderr)
        return 2
    lines = library.forget_voice(_id(args.args[0]))
    print(f"voice {args.args[0]} forgotten; {lines} line{'s' if lines != 1 else ''} no longer say who spoke")
    return 0


def _said(library, words: list[str]) -> int:
    """`said LINE ID|none`: who said the line, then the line as it reads now."""
    if len(words) != 2:
        print("error: say which line and whose voice: egodesk people said LINE ID|none", file=sys.stderr)
        return 2
    if _is_face(words[1]):
        raise ValueError(f"a line is said by a voice; {words[1]} is a face")
    voice = None if words[1].casefold() == "none" else _id(words[1])
    line = library.set_line_voice(_id(words[0], "line", "egodesk clips FOOTAGE"), voice)
    who = line.speaker or (f"Voice {line.voice_id}" if line.voice_id is not None else "someone else")
    print(f"#{line.id} {format_ts(line.start)} {who}: {line.text}")
    return 0


def _id(text: str, kind: str = "voice", listed_by: str = "egodesk people list") -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a {kind} id (see `{listed_by}`)") from None


def register(sub) -> None:
    p = sub.add_parser("people", help="the voices heard and faces seen: list, name, merge, split or forget them")
    p.add_argument("action", choices=["list", "me", "name", "merge", "split", "said", "forget"], nargs="?", default="list")
    p.add_argument(
        "args",
        nargs="*",
        help="me: ID (your own voice); name: ID NAME; merge: A B (B into A); split: ID FOOTAGE; said: LINE ID|none "
        "(who said a line: `egodesk clips` shows its id); forget: ID (a face's ID is written F3)",
    )
    p.add_argument("--json", action="store_true", help="with list: as JSON")
    p.set_defaults(func=cmd_people)
