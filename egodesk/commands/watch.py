"""`egodesk watch add DIR | remove DIR | list | run`: folders whose new files are imported by themselves.

The folders are a library setting (`watched_folders`), the same list the Settings dialog shows; the app
watches them while it is open, `egodesk watch run` without a window (`pipeline/watch.py`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _library():
    from egodesk.pipeline.library import Library

    return Library()


def cmd_add(args: argparse.Namespace) -> int:
    from egodesk.pipeline.watch import watched_with

    library = _library()
    try:
        library.save_settings(watched_with(library.settings, library.paths.root, args.folder))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(
        f"watching {Path(args.folder).expanduser().absolute()}: the app and `egodesk watch run` import what is in it "
        "and each new video, photo and voice note once it has stopped growing",
        file=sys.stderr,
    )
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    from egodesk.pipeline.watch import watched_without

    library = _library()
    try:
        library.save_settings(watched_without(library.settings, args.folder))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"no longer watching {args.folder}; its footage stays in the library", file=sys.stderr)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    for folder in _library().settings.watched_folders:
        print(folder if Path(folder).is_dir() else f"{folder}  (not found: unplugged or removed?)")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from egodesk.commands.progress import ProgressPrinter
    from egodesk.pipeline.watch import WatchReport, watch

    library = _library()
    if not library.settings.watched_folders:
        print("no watched folders: add one with `egodesk watch add DIR`", file=sys.stderr)
        return 1
    printer = ProgressPrinter({f.id: f.title for f in library.footage()})

    def report(found: WatchReport) -> None:
        printer.close()
        printer.titles.update((fid, Path(path).stem) for path, fid in found.added)
        for line in found.lines():
            print(line, file=sys.stderr, flush=True)

    print(
        f"watching {', '.join(library.settings.watched_folders)} (every {library.settings.watch_interval_s:g} s); Ctrl-C stops",
        file=sys.stderr,
    )
    try:
        watch(library, progress=printer, on_report=report)
    except KeyboardInterrupt:
        print("\nstopped; finished stages are kept, and the next run goes on from there", file=sys.stderr)
    finally:
        printer.close()
    return 0


def register(sub) -> None:
    p = sub.add_parser("watch", help="folders whose new videos, photos and voice notes are imported by themselves")
    actions = p.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", help="watch a folder (a camera card's DCIM folder works)")
    add.add_argument("folder")
    add.set_defaults(func=cmd_add)
    remove = actions.add_parser("remove", help="stop watching a folder (its footage stays)")
    remove.add_argument("folder")
    remove.set_defaults(func=cmd_remove)
    actions.add_parser("list", help="the watched folders").set_defaults(func=cmd_list)
    actions.add_parser("run", help="import and index what arrives in them until Ctrl-C").set_defaults(func=cmd_run)
