"""The design enforced by tools: the import contracts, ruff (lint and format) and mypy's ratchet run as part
of the suite, so a layer violation, an import cycle, a lint error or a type error fails `./test.sh`.
Each test fails with the tool's own output. Their configuration is in pyproject.toml."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import tomli_w

from tests.conftest import REPO

BIN = Path(sys.executable).parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def run_tool(*args: str) -> subprocess.CompletedProcess:
    tool = BIN / args[0]
    if not tool.exists():
        pytest.fail(f"{tool} is missing: ./setup.sh installs the dev tools of requirements.txt")
    return subprocess.run([str(tool), *args[1:]], cwd=REPO, capture_output=True, text=True, timeout=600)


def report(result: subprocess.CompletedProcess) -> str:
    return f"{' '.join(result.args)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"


def test_import_contracts_hold():
    """Layers (arrows point down only), Qt only in gui, gui not reaching SQL or models, no import cycles."""
    result = run_tool("lint-imports", "--no-cache")
    assert result.returncode == 0, report(result)


def test_ruff_finds_no_lint_errors():
    result = run_tool("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 0, report(result)


def test_ruff_format_leaves_the_tree_unchanged():
    result = run_tool("ruff", "format", "--no-cache", "--check", ".")
    assert result.returncode == 0, report(result)


def mypy_exempt() -> list[str]:
    """The modules pyproject.toml still exempts from mypy (ignore_errors): a list that only shrinks."""
    return sorted(
        module
        for override in PYPROJECT["tool"]["mypy"].get("overrides", [])
        if override.get("ignore_errors")
        for module in override["module"]
    )


def module_of(path: str) -> str:
    parts = Path(path).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory) -> dict[str, list[str]]:
    """mypy's errors per module of the checked packages, the exempt modules' included: one run of pyproject's
    configuration less its ignore_errors overrides."""
    mypy = PYPROJECT["tool"]["mypy"]
    overrides = [
        {key: value for key, value in override.items() if key != "ignore_errors"} for override in mypy.get("overrides", [])
    ]
    config = tmp_path_factory.mktemp("mypy") / "pyproject.toml"
    config.write_text(tomli_w.dumps({"tool": {"mypy": {**mypy, "overrides": [o for o in overrides if len(o) > 1]}}}))
    result = run_tool("mypy", "--config-file", str(config))
    errors: dict[str, list[str]] = {}
    for line in result.stdout.splitlines():
        match = re.match(r"(egodesk/[^:]+\.py):\d+: error: ", line)
        if match:
            errors.setdefault(module_of(match.group(1)), []).append(line)
    assert result.returncode in (0, 1) and (result.returncode == 0) == (not errors), report(result)
    return errors


def test_mypy_finds_no_type_errors_outside_the_exempt_modules(mypy_errors):
    exempt = set(mypy_exempt())
    found = [line for module, lines in sorted(mypy_errors.items()) if module not in exempt for line in lines]
    assert not found, "mypy (see [tool.mypy] in pyproject.toml):\n" + "\n".join(found)


def test_mypy_exempt_list_only_holds_modules_that_still_fail(mypy_errors):
    """The ratchet: a module that passes now leaves the list, so it stays checked from then on."""
    passing = [module for module in mypy_exempt() if module not in mypy_errors]
    assert not passing, f"these modules now pass mypy: remove them from the ignore_errors list in pyproject.toml: {passing}"
