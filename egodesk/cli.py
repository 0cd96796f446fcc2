"""The `egodesk` command: with no subcommand it opens the app (on the files given, if any); subcommands
work without a window.

This module only parses arguments, calls the layer that does the work, and prints. Each long command
shows progress on stderr; `--json` variants print machine-readable output on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys

from egodesk import __version__


def _cmd_models(args: argparse.Namespace) -> int:
    from egodesk.core.manifest import check_role, load_manifest
    from egodesk.core.model_install import InstallError, default_cache, install_all
    from egodesk.core.paths import LibraryPaths, bundled_models_dir

    manifest = load_manifest()
    root = bundled_models_dir()
    if args.action == "install":
        try:
            install_all(manifest, root, default_cache(), report=lambda line: print(line, file=sys.stderr))
        except InstallError as exc:
            print(f"egodesk: model install failed: {exc}", file=sys.stderr)
            return 1
        return 0
    rows = []
    user_models = LibraryPaths.default().user_models  # the folders the app and `egodesk doctor` look in
    for spec in manifest.values():
        for file, check in zip(spec.files, check_role(spec, user_models, full=args.action == "verify").files):
            rows.append(
                {
                    "role": spec.role,
                    "file": file.name,
                    "size": file.size,
                    "ok": check.ok,
                    "reason": check.reason,
                    "path": str(check.path),
                    "licence": spec.licence,
                }
            )
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            print(f"{row['role']:<12} {row['file']:<42} {'ok' if row['ok'] else 'FAIL ' + row['reason']}")
    return 0 if all(r["ok"] for r in rows) else 1


def _cmd_doctor(args: argparse.Namespace) -> int:
    from egodesk.core.paths import LibraryPaths
    from egodesk.doctor import as_dicts, healthy, run_checks

    checks = run_checks(LibraryPaths.default())
    if args.json:
        print(json.dumps({"ok": healthy(checks), "checks": as_dicts(checks)}, indent=2))
    else:
        width = max(len(c.name) for c in checks)
        for c in checks:
            status = "ok" if c.ok else ("FAIL" if c.required else "warn")
            print(f"{c.name:<{width}}  {status:<4}  {c.detail}")
            if not c.ok and c.fix:
                print(f"{'':<{width}}        fix: {c.fix}")
    return 0 if healthy(checks) else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="egodesk",
        description=__doc__.splitlines()[0],
        epilog="egodesk [--library DIR] FILE... opens the app, imports the files into the library and shows the first.",
    )
    parser.add_argument("--version", action="version", version=f"egodesk {__version__}")
    parser.add_argument("--library", metavar="DIR", help="library folder (default: $EGODESK_HOME or the user data folder)")
    sub = parser.add_subparsers(dest="command")

    models = sub.add_parser("models", help="list, verify or install the default models")
    models.add_argument("action", choices=["list", "verify", "install"], nargs="?", default="list")
    models.add_argument("--json", action="store_true")
    models.set_defaults(func=_cmd_models)

    doctor = sub.add_parser("doctor", help="check the installation, models and runtime")
    doctor.add_argument("--json", action="store_true")
    doctor.set_defaults(func=_cmd_doctor)

    from egodesk.commands import ask, correct, ingest, keep, memory, people, search, watch

    ingest.register(sub)
    watch.register(sub)
    memory.register(sub)
    ask.register(sub)
    search.register(sub)
    keep.register(sub)
    correct.register(sub)
    people.register(sub)
    return parser


def split_files(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[list[str], list[str]]:
    """`egodesk [--library DIR] FILE...` opens the app and imports and shows the files (the desktop entry
    passes the video it was opened with): the options, and the files from the first word that is neither
    an option nor a subcommand. A subcommand wins over a file of its name (`./import` is the file)."""
    commands = {name for action in parser._actions if isinstance(action, argparse._SubParsersAction) for name in action.choices}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] == "--library" else 1
    if i < len(argv) and argv[i] not in commands:
        return argv[:i], argv[i:]
    return argv, []


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    options, files = split_files(parser, sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(options)
    if args.library:
        import os

        os.environ["EGODESK_HOME"] = args.library
    if args.command is None:
        from egodesk.gui.app import run_app

        return run_app(files=files)
    try:
        return args.func(args)
    except Exception as exc:  # a full disk or a locked library is the user's to fix: say so, no traceback
        from egodesk.pipeline.jobs import storage_problem

        problem = storage_problem(exc)
        if problem is None:
            raise
        print(f"egodesk: {problem} ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 1
