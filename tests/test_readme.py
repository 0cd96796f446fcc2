"""The README's commands work as written: every `egodesk ...` command it shows (in its code blocks and
its inline code) names a real subcommand with real options, and the ones a terminal can run without a
window run, in the README's order, on a real library made from the sample footage.

A README line like `egodesk star FOOTAGE 1:15 1:30 | starred | unstar ID` shows several commands: each
alternative after a `|` is a command of its own (`egodesk starred`), or of the first one's subcommand when
it is not a subcommand itself (`notes add ... | list` is `egodesk notes list`). An optional part `[...]`
is tried both ways. Placeholders in capitals (FOOTAGE, PATH..., DIR) stand for real values here."""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from egodesk.cli import build_parser, split_files

README = Path(__file__).resolve().parents[1] / "README.md"
# Commands that do not end by themselves or need a window: the GUI tests and setup.sh cover them.
NOT_RUN_HERE = {
    None: "opens the window",
    "watch run": "imports until Ctrl-C",
    "models install": "./setup.sh runs it",
}
LAST = ("forget",)  # run after the others, a span before the whole footage: they need what it removes
# What the sample footage cannot give, said with a non-zero exit: it shows no text on screen to correct,
# no umbrella to find (search exits 1 on no hits, as grep does), and one voice in one footage only,
# nothing to merge or split.
REFUSED_HERE = {
    "--screen": "no on-screen text",
    "search 'umbrella": "0 hits",
    "people merge": "no voice 2",
    "people split": "nothing to split it from",
}


def _shown_lines(text: str) -> list[str]:
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        lines += [line.split("#")[0].strip() for line in block.splitlines()]
    lines += [" ".join(code.split()) for code in re.findall(r"`(egodesk [^`]*)`", text)]
    return [line for line in lines if line == "egodesk" or line.startswith("egodesk ")]


def _subcommands(parser: argparse.ArgumentParser) -> set[str]:
    return {name for a in parser._actions if isinstance(a, argparse._SubParsersAction) for name in a.choices}


def _parses(command: str) -> bool:
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            options, _files = split_files(build_parser(), shlex.split(command)[1:])
            build_parser().parse_args(options)
    except SystemExit:
        return False
    return True


def _alternatives(line: str, commands: set[str]) -> list[str]:
    head, *others = [part.strip() for part in re.split(r" \| ", line)]
    shown = [head]
    for other in others:
        within = f"egodesk {head.split()[1]} {other}"  # an action of the first command's subcommand, when it is one
        shown.append(within if _parses(within) or other.split()[0] not in commands else f"egodesk {other}")
    return shown


def _with_and_without_options(command: str) -> list[str]:
    groups = re.findall(r"\[[^\]]*\]", command)
    variants = []
    for keep in itertools.product((False, True), repeat=len(groups)):
        text = command
        for group, kept in zip(groups, keep):
            text = text.replace(group, group[1:-1] if kept else "", 1)
        variants.append(" ".join(text.split()))
    return variants


def readme_commands() -> list[str]:
    """Every command the README shows, each optional part with and without, in the README's order."""
    commands = _subcommands(build_parser())
    shown: list[str] = []
    for line in _shown_lines(README.read_text()):
        for command in _alternatives(line, commands):
            shown += [v for v in _with_and_without_options(command) if v not in shown]
    return shown


def as_argv(command: str, values: dict[str, str]) -> list[str]:
    """The command's words after `egodesk`, its placeholders given real values."""
    argv = shlex.split(command)[1:]
    return [values.get(word, word) for word in argv]


def subcommand(argv: list[str]) -> str | None:
    options, _files = split_files(build_parser(), argv)
    args = build_parser().parse_args(options)
    action = getattr(args, "action", None)
    if args.command and isinstance(action, str) and f"{args.command} {action}" in NOT_RUN_HERE:
        return f"{args.command} {action}"
    return args.command


def placeholder_values(tmp: Path, video: Path) -> dict[str, str]:
    return {
        "PATH...": str(video),
        "VIDEO": str(video),
        "FILE": str(video),
        "FILE...": str(video),
        "FOOTAGE": "1",
        "ID": "1",
        "LINE": "1",  # the sample's one transcript line
        "DIR": str(tmp / "folder"),
        "TEXT": "the keys are in the blue bowl",
        "T": "0:02",
        "NAME": "John",
        "A": "1",
        "B": "2",
        "1:15": "0:02",  # the README's moment, inside the 11 s sample
        "1:30": "0:08",
        "moment.mp4": str(tmp / "moment.mp4"),
    }


def test_the_readme_is_read_in_five_minutes():
    """A user's page: at most 150 lines; engineering detail lives in docs/."""
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 150


def test_every_link_and_picture_in_the_docs_is_there():
    """The README's and docs/' relative links and pictures name files of the checkout (the guide's
    screenshots included)."""
    pages = [README, *sorted(README.parent.glob("docs/*.md"))]
    targets = 0
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            targets += 1
            assert (page.parent / target).exists(), f"{page.name} links to {target}, which is not there"
    assert targets >= 10


def test_the_readme_shows_commands_of_every_kind():
    shown = readme_commands()
    assert len(shown) >= 20, shown  # the parser below would pass vacuously on an empty list
    for expected in ("egodesk doctor", "egodesk import PATH... --wait", "egodesk starred", "egodesk notes list"):
        assert expected in shown


def test_every_command_in_the_readme_parses(tmp_path):
    values = placeholder_values(tmp_path, tmp_path / "DAY1_11094208_walk.mp4")
    for command in readme_commands():
        argv = as_argv(command, values)
        try:
            options, _files = split_files(build_parser(), argv)
            build_parser().parse_args(options)
        except SystemExit as exc:
            pytest.fail(f"the README's `{command}` does not parse (exit {exc.code})")


def test_the_readme_commands_run_as_written(library, composite_clip, tmp_path):
    """Each runnable command, in the README's order (forgetting last), exits 0 on a library holding the
    sample footage; an exported moment is a real file."""
    (tmp_path / "folder").mkdir()
    values = placeholder_values(tmp_path, composite_clip)
    runnable = [c for c in readme_commands() if subcommand(as_argv(c, values)) not in NOT_RUN_HERE]
    runnable.sort(key=lambda c: (subcommand(as_argv(c, values)) in LAST, -len(c) * (subcommand(as_argv(c, values)) in LAST)))
    ran = []
    for command in runnable:
        if Path(values["moment.mp4"]).exists():
            os.remove(values["moment.mp4"])  # the README's export runs with and without its options
        result = subprocess.run(
            [sys.executable, "-m", "egodesk", *as_argv(command, values)],
            capture_output=True,
            text=True,
            env={**os.environ, "EGODESK_LLM_MODEL": "llm-test"},  # any model answers; the small one quickly
            timeout=600,
        )
        refusal = next((why for mark, why in REFUSED_HERE.items() if mark in command), None)
        if refusal and result.returncode != 0:
            assert refusal in result.stderr and "Traceback" not in result.stderr, result
            continue
        assert result.returncode == 0, f"`{command}` exited {result.returncode}: {result.stderr[-2000:]}"
        ran.append(command)
        if command.startswith("egodesk export"):
            assert Path(values["moment.mp4"]).stat().st_size > 10_000
    assert any(c.startswith("egodesk ask") for c in ran) and any(c.startswith("egodesk forget") for c in ran)
