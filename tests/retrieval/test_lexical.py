"""Saved BM25 indices: built once per unit family and snapshot, loaded by the next process, rebuilt
when damaged, and deleted by forget (they hold the forgotten words)."""

import logging

import bm25s
import numpy as np
import pytest

from egodesk.core.paths import LibraryPaths
from egodesk.core.settings import Settings
from egodesk.memory.forget import forget
from egodesk.retrieval.base import Memory
from egodesk.retrieval.parent import CHILD_KIND
from tests.retrieval.conftest import build_library

QUERY = "take paper"


@pytest.fixture
def library(tmp_path, embedder):
    """(store, indices, open) where open() is Memory as a newly started process would make it."""
    store, indices = build_library(tmp_path, embedder)
    yield store, indices, lambda: Memory(store, indices, embedder, settings=Settings())
    store.close()


def saved_folders(indices):
    return sorted(indices.lexical_dir.glob(f"{CHILD_KIND}.all.*"))


def test_a_second_process_loads_the_saved_index_instead_of_building(library, monkeypatch):
    _, indices, open_memory = library
    first = open_memory().lexical([CHILD_KIND])
    scores = first.scores(QUERY)
    assert scores.max() > 0 and len(saved_folders(indices)) == 1

    def no_build(*_args, **_kwargs):
        raise AssertionError("the saved index should have been loaded")

    monkeypatch.setattr(bm25s.BM25, "index", no_build)
    again = open_memory().lexical([CHILD_KIND])
    assert np.array_equal(again.rows, first.rows) and np.allclose(again.scores(QUERY), scores)


def test_a_damaged_saved_index_is_built_again(library, caplog):
    caplog.set_level(logging.INFO, logger="egodesk.retrieval.lexical")
    _, indices, open_memory = library
    scores = open_memory().lexical([CHILD_KIND]).scores(QUERY)
    (saved,) = saved_folders(indices)
    (saved / "params.index.json").write_text("{ not json")
    assert np.allclose(open_memory().lexical([CHILD_KIND]).scores(QUERY), scores)
    assert "rebuilding the lexical index" in caplog.text


def test_forget_deletes_the_saved_indices(library, tmp_path):
    store, indices, open_memory = library
    memory = open_memory()
    memory.lexical([CHILD_KIND]).scores(QUERY)
    assert saved_folders(indices)
    forget(store, indices, LibraryPaths.at(tmp_path / "lib"), int(memory.catalog().footage[0]))
    assert not indices.lexical_dir.exists()
    assert len(open_memory().lexical([CHILD_KIND]).rows) < len(memory.lexical([CHILD_KIND]).rows)  # built anew


def test_a_word_no_unit_holds_finds_the_words_spelled_or_sounding_alike_at_half_weight(library):
    """A question asks in the words said; the transcript holds what the recogniser wrote for them."""
    index = library[2]().lexical([CHILD_KIND])
    said, heard = index.scores("kilometres"), index.scores("kilometers")  # the line says "kilometres"
    assert said.max() > 0 and int(np.argmax(heard)) == int(np.argmax(said))
    assert heard.max() == pytest.approx(0.5 * said.max())
    assert not index.scores("kilobytes").any()  # not alike: nothing found
