"""What every bad-input test checks: a clear message (no traceback, the file and the reason named),
nothing lost (every stored row still there), and answers that are grounded or abstain."""

from __future__ import annotations

import os
import subprocess
import sys

from sqlalchemy import text

from egodesk.core.types import ABSTENTION, Answer
from egodesk.memory.store import Store

# The index manifest is rewritten as indices grow; its rows are derived, SQLite's vectors are the truth.
# Likewise the search index's b-tree pages and word counts (FTS5 shadow tables, fts5vocab: merged and recounted as
# rows are added); the rows it serves (table text_search) are compared.
DERIVED_TABLES = {"index_info", "text_search_data", "text_search_idx", "text_search_vocab"}


def snapshot(store: Store) -> dict[str, list[str]]:
    """Every row of every table (as text, sorted): two snapshots compare what the library holds."""
    with store.engine.connect() as connection:
        tables = (
            connection.execute(text("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"))
            .scalars()
            .all()
        )
        return {t: sorted(repr(tuple(row)) for row in connection.execute(text(f'SELECT * FROM "{t}"'))) for t in tables}


def assert_nothing_lost(before: dict[str, list[str]], after: dict[str, list[str]]) -> None:
    """Every row stored before is still stored, unchanged (new rows may have been added)."""
    for table, rows in before.items():
        if table in DERIVED_TABLES:
            continue
        missing = set(rows) - set(after.get(table, []))
        assert not missing, f"{table}: {len(missing)} row(s) lost or changed, e.g. {sorted(missing)[0][:200]}"


def grounded_or_abstained(answer: Answer, messages: list[dict], options: list[str] | None = None) -> bool:
    """The abstention (no option picked, nothing claimed), or an answer that says something (not an
    evidence id, not the injected "A"; a pick is its option's text) and cites only lines the model was
    shown: each cited moment's line ("E<n> ...", n its place in the chronological evidence) is in the
    evidence block of the prompt that was sent (`messages`)."""
    if answer.abstained:
        return answer.text == ABSTENTION and answer.option_index is None and not answer.grounded
    user = messages[-1]["content"]
    block = user[user.index("<evidence>") : user.index("</evidence>")].splitlines()
    place = {ev.unit_id: n for n, ev in enumerate(answer.evidence, start=1)}
    shown = all(unit in place and any(line.startswith(f"E{place[unit]} ") for line in block) for unit in answer.cited)
    said = answer.text.strip(" .").upper() not in {"", "A", *(f"E{n}" for n in place.values())}
    picked = options is None or (answer.option_index is not None and answer.text == options[answer.option_index])
    return answer.grounded and bool(answer.cited) and shown and said and picked


def egodesk(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """The `egodesk` command as a user runs it (EGODESK_HOME names the library)."""
    return subprocess.run(
        [sys.executable, "-m", "egodesk", *args], capture_output=True, text=True, env=dict(os.environ), timeout=timeout
    )
