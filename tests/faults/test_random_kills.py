"""kill -9 at seeded random points of import, ingest and memory building; restart; compare.

From a fixed seed, one point is drawn in every stage (probe at import, the six video stages, the four
memory stages) and more at random from the rest of the catalogue (`harness.POINTS_BY_STAGE`), each a
place the worker really passes. One library is then taken through the drawn points in pipeline order:
each test starts the import + worker where the previous kill left it (so every kill is also a restart
after the previous one), with EGODESK_KILL_AT set to its point, and asserts that the process died there
by SIGKILL and that the library holds exactly what the uninterrupted reference run had committed at
the last transaction boundary before that point (`harness.committed_at`): a stage that commits whole
left nothing of itself, a batch build whole batches, and index files are trusted only when they hold
exactly the stored vectors. The last test restarts once more and compares the finished library with
the uninterrupted run: no lost and no duplicated rows.
"""

from __future__ import annotations

import logging
import random
import signal

import pytest

from egodesk.memory.indices import IndexManager
from egodesk.memory.store import Store
from tests.faults.harness import (
    ALL_POINTS,
    POINTS_BY_STAGE,
    assert_same,
    committed_at,
    fault_env,
    import_and_index,
    job_states,
    snapshot,
)

pytestmark = pytest.mark.faults

SEED = 7
DRAWS = 22


def draw(seed: int, n: int) -> list[str]:
    """One point per stage, then the rest at random; in the order a run passes them."""
    rng = random.Random(seed)
    chosen = {rng.choice(points) for points in POINTS_BY_STAGE.values()}
    chosen |= set(rng.sample(sorted(set(ALL_POINTS) - chosen), n - len(chosen)))
    return [p for p in ALL_POINTS if p in chosen]


DRAWN = draw(SEED, DRAWS)


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    return tmp_path_factory.mktemp("killed") / "lib"


@pytest.mark.parametrize("point", DRAWN)
def test_kill_leaves_only_whole_commits(point, chain, reference, tiny_clip, llm_server):
    ran = import_and_index(chain, tiny_clip, fault_env(llm_server.url, EGODESK_KILL_AT=point))
    assert ran.code == -signal.SIGKILL, f"not killed at {point}: {ran}"
    killed = snapshot(chain)
    files = killed.pop("files")
    boundary = committed_at(point)
    expected = snapshot(reference.copies[boundary])
    del expected["files"]
    assert_same(killed, expected, f"killed at {point} vs the uninterrupted run at {boundary}")
    assert files == snapshot(reference.copies[point])["files"]  # e.g. thumbnails written before their commit


def test_restart_after_the_kills_equals_the_uninterrupted_run(chain, reference, tiny_clip, llm_server, caplog):
    ran = import_and_index(chain, tiny_clip, fault_env(llm_server.url))
    assert ran.code == 0, ran
    assert {state for state, _ in job_states(chain).values()} == {"done"}
    final = snapshot(chain)
    assert_same(final, reference.final, "restarted after every kill vs the uninterrupted run")
    store = Store(chain / "library.sqlite")
    try:  # what the app loads: every index file saved again, trusted as it is, serving its stored vectors
        manager = IndexManager(store, chain / "indices")
        with caplog.at_level(logging.DEBUG, logger="egodesk.memory.indices"):
            assert {space: manager.count(space) for space in final["index labels"]} == {
                space: len(labels) for space, labels in final["index labels"].items()
            }
        assert not caplog.records, [r.getMessage() for r in caplog.records]  # no rebuild was needed
    finally:
        store.close()


def test_the_draw_spans_every_stage():
    assert len(DRAWN) >= 20
    assert all(any(p in DRAWN for p in points) for points in POINTS_BY_STAGE.values())
