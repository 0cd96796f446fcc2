"""Odd search text through `Library.search` and `egodesk search`: FTS5's own syntax, unbalanced quotes,
punctuation only, empty and very long queries never raise, never match more than their words would,
and change nothing stored."""

from __future__ import annotations

import pytest

from egodesk.cli import main as cli_main
from egodesk.pipeline.library import Library
from tests.badinput.support import assert_nothing_lost, snapshot
from tests.retrieval.test_search import write_memory

pytestmark = pytest.mark.badinput

ODD = [
    "",
    "   ",
    '"',
    '""',
    '"red umbrella',
    'red" umbrella"',
    "NEAR(red umbrella)",
    "red AND umbrella OR NOT car",
    "*",
    "umbr*",
    "text: red",
    "^red",
    "-red +umbrella",
    "(red",
    "{kind} : speech",
    "red\x00umbrella",
    "'; DROP TABLE footage; --",
    "🙂 umbrella 🙂",
    "red " * 5000,
]


@pytest.fixture
def library(tmp_path):
    lib = Library(tmp_path / "library")
    assert not lib.add([write_memory(tmp_path / "memory.jsonl")]).errors
    yield lib
    lib.close()


@pytest.mark.parametrize("query", ODD, ids=[repr(q[:20]) for q in ODD])
def test_odd_queries_are_only_words(library, query):
    before = snapshot(library.store)
    result = library.search(query)
    # FTS5 operators are words here: no hit holds any word but the query's own (and those alike)
    for hit in result.hits:
        assert hit.words and all(w.lower().startswith(("red", "umbrella", "umbr", "car")) for w in hit.words), hit
    assert_nothing_lost(before, snapshot(library.store))


def test_operators_do_not_widen_a_query(library):
    assert library.search("red OR zeppelin").hits == []  # OR is a (common) word: every other word must match
    assert len(library.search("red NOT umbrella").hits) == 1  # NOT excludes nothing
    assert library.search("NEAR(red umbrella)").hits == []  # "near" is a word no one said
    assert library.search("*").hits == [] and library.search("").hits == []


def test_cli_refuses_a_bad_limit_and_survives_odd_text(library, capsys):
    root = str(library.paths.root)
    assert cli_main(["search", "red", "--limit", "0", "--library", root]) == 2
    assert "--limit" in capsys.readouterr().err
    assert cli_main(["search", 'NEAR("red', "--library", root]) == 1  # an open phrase "red..." nothing starts with
    assert cli_main(["search", "(red", "--library", root]) == 0
