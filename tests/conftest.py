"""Shared fixtures: real media from ../shared/media, a scratch library, and a guard that fails a test
that logs an unexpected warning."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from benchmarks.clips import JFK_AUDIO, WALK_VIDEO, WHOLE_WALK_SPOKEN, ffmpeg, speaking_walk  # noqa: F401  (the tests take them from here)

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EGODESK_SHARED", REPO.parent / "shared"))
MEDIA = SHARED / "media"
BENCHMARKS = SHARED / "benchmarks"

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
# The whole suite uses the tiny real LLM; tests that measure quality ask for llm-quality explicitly.
os.environ.setdefault("EGODESK_LLM_MODEL", "llm-test")
# ... and the fast MiniLM embedder; tests of the default nomic embedder load it themselves.
os.environ.setdefault("EGODESK_EMBEDDER_MODEL", "embedder")
# Ingest tests stop after the parent-child and visual memory; the LLM-built memories have their own
# tests (tests/memory) and one end-to-end pipeline test that switches them back on.
os.environ.setdefault("EGODESK_MEMORY_RECORDS", "false")
os.environ.setdefault("EGODESK_MEMORY_ATOMIC", "false")
# The data folder a user chose in Settings lives in the per-user config folder: tests get their own.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="egodesk-test-config-")


@pytest.fixture(scope="session")
def composite_clip(tmp_path_factory) -> Path:
    """The walk video with the JFK speech as its audio: a realistic wearable clip with known words."""
    out = tmp_path_factory.mktemp("media") / "DAY1_11094208_composite.mp4"
    return speaking_walk(out, *WHOLE_WALK_SPOKEN)


@pytest.fixture(scope="session")
def silent_clip(tmp_path_factory) -> Path:
    """The walk video without any audio stream."""
    out = tmp_path_factory.mktemp("media") / "walk_noaudio.mp4"
    ffmpeg("-i", str(WALK_VIDEO), "-map", "0:v:0", "-c:v", "copy", "-an", str(out))
    return out


@pytest.fixture
def library(tmp_path, monkeypatch) -> Path:
    """A fresh, empty library folder; EGODESK_HOME points at it for the test."""
    root = tmp_path / "library"
    monkeypatch.setenv("EGODESK_HOME", str(root))
    return root


@pytest.fixture(autouse=True)
def fail_on_unexpected_warnings(caplog):
    """A test that logs a WARNING or worse fails unless it marks it expected with caplog.clear() or
    by asserting on it (tests that expect warnings read caplog.records and then clear it)."""
    yield
    unexpected = [r for r in caplog.get_records("call") if r.levelno >= logging.WARNING and not getattr(r, "expected", False)]
    if unexpected:
        pytest.fail("unexpected log warnings: " + "; ".join(f"{r.name}: {r.getMessage()}" for r in unexpected[:5]))


def have(tool: str) -> bool:
    return shutil.which(tool) is not None


@pytest.fixture(scope="session")
def embedder():
    """The real MiniLM embedder, loaded once for the whole run."""
    from egodesk.perception.embedder import make_embedder

    return make_embedder(model="embedder")


@pytest.fixture(scope="session")
def tiny_llm():
    """The real tiny llm-test model (valid JSON, weak answers), loaded once for the whole run."""
    from egodesk.core.settings import Settings
    from egodesk.perception.llm import make_llm

    return make_llm(Settings(llm_model="llm-test", threads=2), n_ctx=2048)
