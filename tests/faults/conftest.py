"""Fixtures of the fault suite: the tiny clip, the loopback LLM server, and one uninterrupted reference
run whose library is copied at every fault point it passes (the process stopped there meanwhile)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from benchmarks.clips import FAST
from tests.conftest import speaking_walk
from tests.faults.harness import ALL_POINTS, FakeLLMServer, copy_library, fault_env, import_and_index, job_states, snapshot


@pytest.fixture(scope="session")
def tiny_clip(tmp_path_factory) -> Path:
    """4 s of the walk video at 320x180, 10 fps, with the start of the JFK speech: two 2 s clips."""
    out = tmp_path_factory.mktemp("media") / "DAY1_11094208_tiny.mp4"
    return speaking_walk(out, "-t", "4", "-vf", "scale=320:180", "-r", "10", "-c:v", "libx264", *FAST, "-c:a", "aac")


@pytest.fixture(scope="session")
def llm_server():
    server = FakeLLMServer()
    yield server
    server.close()


@dataclass
class Reference:
    root: Path
    final: dict
    copies: dict[str, Path] = field(default_factory=dict)  # fault point -> the library at that moment

    def copy_at(self, point: str, dest: Path) -> Path:
        """A fresh copy (to run a worker on) of the library as it was at `point`."""
        shutil.copytree(self.copies[point], dest)
        return dest


@pytest.fixture(scope="session")
def reference(tmp_path_factory, tiny_clip, llm_server) -> Reference:
    base = tmp_path_factory.mktemp("reference")
    root = base / "lib"
    ref = Reference(root, {})
    pending = iter(ALL_POINTS)

    def keep_copy():
        point = next(pending)
        ref.copies[point] = copy_library(root, base / f"at-{len(ref.copies):02d}-{point.replace(':', '_')}")

    ran = import_and_index(root, tiny_clip, fault_env(llm_server.url, EGODESK_STOP_AT=",".join(ALL_POINTS)), keep_copy)
    assert ran.code == 0, ran
    assert list(ref.copies) == ALL_POINTS, "the run did not pass every fault point of the catalogue, in order"
    ref.final = snapshot(root)
    assert {state for state, _ in job_states(root).values()} == {"done"}
    return ref
