"""`egodesk import | jobs | cancel | resume | footage | clips`."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from egodesk.commands import find_footage
from egodesk.core.timeutil import format_ts


def _library():
    from egodesk.pipeline.library import Library

    return Library()


def cmd_import(args: argparse.Namespace) -> int:
    from egodesk.commands.progress import ProgressPrinter
    from egodesk.pipeline.runner import running_worker
    from egodesk.pipeline.worker import read_progress, start_worker, stop_process

    library = _library()
    if args.captioner:
        library.save_settings(library.settings.model_copy(update={"captioner": args.captioner}))
    report = library.add(args.paths)
    for path, reason in report.errors:
        print(f"error: {path}: {reason}", file=sys.stderr)
    for note in report.notes[:20]:
        print(f"note: {note}", file=sys.stderr)
    print(
        f"added {len(report.added)} footage, {len(report.existing)} already in the library, {len(report.errors)} error(s)",
        file=sys.stderr,
    )
    if not args.wait:
        if running_worker(library.paths):
            print("a worker is already indexing this library; it picks up the new footage", file=sys.stderr)
            return 1 if report.errors and not report.added else 0
        start_worker(library.paths, detached=True)
        print("indexing in the background: see `egodesk jobs`", file=sys.stderr)
        return 1 if report.errors and not report.added else 0
    titles = {f.id: f.title for f in library.footage()}
    worker = start_worker(library.paths, detached=False)  # attaches to a running worker's progress, if any
    printer = ProgressPrinter(titles)
    try:
        read_progress(iter(worker.stdout.readline, ""), printer)
        worker.wait()
    except KeyboardInterrupt:
        stop_process(worker.pid)
        library.mark_cancelled()
        print("\ncancelled; `egodesk import --wait` or `egodesk resume` continues where it stopped", file=sys.stderr)
        return 130
    finally:
        printer.close()
    failed = [f for f in library.footage() if f.state == "failed"]
    for f in failed:
        print(f"failed: {f.title}: {f.error}", file=sys.stderr)
    return 1 if (report.errors or failed) else 0


def cmd_jobs(args: argparse.Namespace) -> int:
    rows = _library().job_rows()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        extra = f"  {r['error']}" if r["error"] else ""
        print(f"{r['footage_id']:>5} {r['footage'][:30]:<30} {r['stage']:<14} {r['state']:<10} {r['done']}/{r['total']}{extra}")
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    from egodesk.pipeline.runner import running_worker, wait_until_no_writer
    from egodesk.pipeline.worker import stop_process

    library = _library()
    pid = running_worker(library.paths)
    if pid is None:
        print("no worker is running", file=sys.stderr)
        return 0
    stop_process(pid)
    wait_until_no_writer(library.paths)
    print(f"cancelled the worker ({pid}); {library.mark_cancelled()} stage(s) left resumable", file=sys.stderr)
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    library = _library()
    count = library.resume()
    print(f"{count} stage(s) queued again", file=sys.stderr)
    args.paths, args.captioner = [], None
    return cmd_import(args)


def cmd_footage(args: argparse.Namespace) -> int:
    rows = _library().footage()
    if args.json:
        print(json.dumps([{**asdict(f), "thumbnail": str(f.thumbnail) if f.thumbnail else None} for f in rows], indent=2))
        return 0
    for f in rows:
        print(
            f"{f.id:>5} {f.title[:32]:<32} {format_ts(f.start)} {f.duration:8.1f}s {f.kind:<5} {f.state}"
            + (f"  ({f.error})" if f.error else "")
            + (f"  (missing: {f.path} is gone; its memories are kept)" if f.missing else "")
        )
    return 0


def cmd_clips(args: argparse.Namespace) -> int:
    library = _library()
    footage_id = find_footage(library, args.footage)
    if footage_id is None:
        return 2
    rows = library.clips(footage_id)
    if args.json:
        print(json.dumps([{**asdict(c), "thumbnails": [str(p) for p in c.thumbnails]} for c in rows], indent=2))
        return 0
    for c in rows:
        print(f"[{format_ts(c.start, with_date=False)}-{format_ts(c.end, with_date=False)}] {c.caption}")
        for (start, _end, speaker, text), line_id in zip(c.transcript, c.line_ids, strict=True):  # the id: `people said`
            print(f"    {format_ts(start, with_date=False)} #{line_id} {speaker + ': ' if speaker else ''}{text}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("import", help="import footage files or folders (and text tracks: .jsonl .srt .vtt)")
    p.add_argument("paths", nargs="+")
    p.add_argument("--captioner", choices=["describe", "vlm", "server"])
    p.add_argument(
        "--wait",
        action="store_true",
        help="index now and show progress (Ctrl-C cancels; with a worker already running, follow it)",
    )
    p.set_defaults(func=cmd_import)
    p = sub.add_parser("jobs", help="the indexing stages of every footage and their state")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_jobs)
    p = sub.add_parser("cancel", help="stop the running indexing worker (resumable)")
    p.set_defaults(func=cmd_cancel)
    p = sub.add_parser("resume", help="retry cancelled and failed stages")
    p.add_argument("--wait", action="store_true")
    p.set_defaults(func=cmd_resume)
    p = sub.add_parser("footage", help="list the library's footage")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_footage)
    p = sub.add_parser("clips", help="a footage's clips: caption, transcript lines (with their ids), tags, on-screen text")
    p.add_argument("footage", help="footage id, title or path")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_clips)
