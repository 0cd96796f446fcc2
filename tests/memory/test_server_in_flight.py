"""Memory building against an OpenAI-compatible server keeps several requests in flight: a loopback server
that answers each request after a delay shows the wall time fall about N-fold for N = 1, 2, 4, with the
same memory stored in footage order; a request that fails, or a server that dies mid-build, leaves every
batch before it stored and none after, and a resume completes the memory exactly as one uninterrupted
build does (no row stored twice). Requests in flight against the real llama_cpp.server: the slow
tests/perception/test_captioner.py::test_real_server_answers_the_requests_a_memory_build_keeps_in_flight."""

from __future__ import annotations

import time
from contextlib import closing
from datetime import datetime, timedelta

import pytest
from sqlalchemy import func, select

from egodesk.core.settings import Settings
from egodesk.memory.indices import IndexManager
from egodesk.memory.record_compression import BUILDER, RECORD, build_records
from egodesk.memory.record_tables import BuildProgress
from egodesk.memory.store import Store, Unit
from egodesk.perception.llm import LLMError, ServerLLM
from tests.faults.harness import FakeLLMServer
from tests.memory.conftest import narrated_day

T0 = datetime(2024, 5, 6, 8, 0)
OBJECTS = ["plate", "fridge", "cloth", "kettle", "window", "towel", "spoon", "bread", "coffee", "drawer", "glass", "apple"]
DELAY_S = 0.5  # long against the fixed cost of a batch (embedding, writing), so the ratio measures the requests
SETTINGS = Settings(wearer_name="I", records_batch_size=1)


def day(folder) -> tuple[Store, IndexManager, int]:
    """A footage of twelve narrated moments: twelve batches of one clip."""
    return narrated_day(folder, [(T0 + timedelta(minutes=5 * i), f"I pick up the {thing}.") for i, thing in enumerate(OBJECTS)])


def records_of(store: Store, footage: int) -> list[tuple[float, str]]:
    with store.session() as s:
        rows = s.execute(
            select(Unit.start_ts, Unit.text).where(Unit.footage_id == footage, Unit.kind == RECORD).order_by(Unit.id)
        )
        return [tuple(row) for row in rows]


def done_batches(store: Store, footage: int) -> int:
    with store.session() as s:
        mark = s.get(BuildProgress, (footage, BUILDER))
        return mark.batches if mark else 0


@pytest.fixture
def slow_server():
    with FakeLLMServer(delay_s=DELAY_S) as server:
        yield server


def test_n_requests_in_flight_shorten_the_build_about_n_fold_and_store_the_same_memory(tmp_path, embedder, slow_server):
    walls, memories = {}, {}
    for n in (1, 2, 4):
        store, indices, footage = day(tmp_path / f"n{n}")
        slow_server.most_in_flight = 0
        started = time.perf_counter()
        with closing(ServerLLM(slow_server.url, requests=n)) as llm:
            build_records(store, indices, embedder, llm, footage, SETTINGS)
        walls[n] = time.perf_counter() - started
        memories[n] = records_of(store, footage)
        assert slow_server.most_in_flight == n
        store.close()
    print({n: f"{wall:.2f} s ({walls[1] / wall:.2f}x)" for n, wall in walls.items()})
    assert len(memories[1]) == 2 * len(OBJECTS) and memories[1] == memories[2] == memories[4]  # footage order
    assert walls[1] >= len(OBJECTS) * DELAY_S
    assert walls[1] / walls[2] > 1.6 and walls[1] / walls[4] > 2.6


def test_the_server_says_how_many_requests_it_runs_at_once(slow_server):
    def in_flight(**kwargs) -> int:
        with closing(ServerLLM(slow_server.url, **kwargs)) as llm:
            return llm.in_flight

    assert in_flight() == 4  # it does not say: the default
    slow_server.slots = 3
    assert in_flight() == 3
    assert in_flight(requests=2) == 2  # the setting wins


@pytest.mark.parametrize("fault", ["one request fails", "the server dies"])
def test_a_failed_request_stores_every_batch_before_it_and_a_resume_completes_the_memory(tmp_path, embedder, fault, caplog):
    reference_store, reference_indices, footage = day(tmp_path / "reference")
    with FakeLLMServer() as healthy:
        with closing(ServerLLM(healthy.url, requests=1)) as llm:
            build_records(reference_store, reference_indices, embedder, llm, footage, SETTINGS)
    want = records_of(reference_store, footage)

    store, indices, footage = day(tmp_path / "faulty")
    with FakeLLMServer(delay_s=0.05) as broken:
        if fault == "one request fails":
            broken.failing = {6}
        else:
            broken.dies_at = 6
        with pytest.raises(LLMError), closing(ServerLLM(broken.url, requests=4)) as llm:
            build_records(store, indices, embedder, llm, footage, SETTINGS)
        asked = broken.requests
    reason = "HTTP 500 (the model crashed)" if fault == "one request fails" else "Server disconnected"
    assert any(reason in record.getMessage() for record in caplog.records)  # the log names the clip and the cause
    caplog.clear()
    kept = done_batches(store, footage)
    assert 0 < kept < len(OBJECTS) and asked > kept  # later batches were in flight, none of them stored
    assert records_of(store, footage) == want[: 2 * kept]  # exactly the batches before the failure, in order
    with FakeLLMServer() as healthy:
        with closing(ServerLLM(healthy.url, requests=4)) as llm:
            build_records(store, indices, embedder, llm, footage, SETTINGS)
    assert records_of(store, footage) == want and done_batches(store, footage) == len(OBJECTS)
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(Unit).where(Unit.kind == RECORD)) == len(want)
