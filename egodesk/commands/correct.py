"""`egodesk correct`: fix what was misheard or misread, from the terminal.

`egodesk correct FOOTAGE TIME "the words said"` puts the person's words in place of the transcript line at
TIME (seconds into the footage: "75", "1:15", "0:01:15.5"); `--screen` corrects the on-screen text read
there instead; `--undo` takes back the line's latest correction; `egodesk correct --list` shows the
corrections in force. A refused correction is told on stderr with its reason (exit status 2) and changes
nothing (`memory.corrections` says the rules).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from egodesk.commands import find_footage
from egodesk.core.timeutil import clock, parse_clock


def _show(line, origin: float) -> str:
    mark = "corrected" if line.corrected else "as heard"
    return f"{line.kind} {clock(line.start - origin)}-{clock(line.end - origin)} ({mark}): {line.text}"


def cmd_correct(args: argparse.Namespace) -> int:
    from egodesk.pipeline.library import Library

    library = Library()
    try:
        origins = {f.id: f.start for f in library.footage()}
        if args.list:
            rows = library.corrections()
            if args.json:
                print(json.dumps([asdict(c) for c in rows], indent=2, ensure_ascii=False))
            for c in rows if not args.json else []:
                print(f"{c.footage_id}  {_show(c, origins[c.footage_id])}  (heard: {c.heard})")
            return 0
        if args.footage is None or args.time is None or (args.text is not None) == args.undo:
            print("error: say FOOTAGE TIME and the new text, or FOOTAGE TIME --undo", file=sys.stderr)
            return 2
        footage_id = find_footage(library, args.footage)
        if footage_id is None:
            return 2
        at = origins[footage_id] + parse_clock(args.time)
        kind = "screen" if args.screen else "speech"
        if args.undo:
            line = library.undo_correction(footage_id, at, kind)
        else:
            line = library.correct_line(footage_id, at, args.text, kind)
        print(_show(line, origins[footage_id]))
        return 0
    except ValueError as exc:  # CorrectionError, or a time that is not one
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        library.close()


def register(sub) -> None:
    p = sub.add_parser("correct", help="fix a misheard transcript line or misread on-screen text (or --undo)")
    p.add_argument("footage", nargs="?", help="footage id, title or path")
    p.add_argument("time", nargs="?", help="a moment within the line, seconds into the footage: 75, 1:15 or 0:01:15.5")
    p.add_argument("text", nargs="?", help="the line as it was really said (or shown)")
    p.add_argument("--screen", action="store_true", help="correct the on-screen text read there, not the speech")
    p.add_argument("--undo", action="store_true", help="take back the line's latest correction")
    p.add_argument("--list", action="store_true", help="list the corrections in force")
    p.add_argument("--json", action="store_true", help="with --list: as JSON")
    p.set_defaults(func=cmd_correct)
