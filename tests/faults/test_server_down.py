"""A server backend that is down (connection refused on a free loopback port) or hangs (accepts the
connection, never answers): the server LLM and the server captioner fail with a message naming the URL
and the cause, a hang within the configured timeout; in the pipeline the stage fails with that message
and nothing stored is lost."""

from __future__ import annotations

import socket
import time

import pytest

from egodesk.perception.captioner import CaptionerError, ClipContext, ServerCaptioner
from egodesk.perception.llm import LLMError, ServerLLM
from tests.faults.harness import assert_same, fault_env, job_states, snapshot, worker

pytestmark = pytest.mark.faults

TIMEOUT_S = 1.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def hanging_url():
    """A listening socket nobody reads: the kernel completes the connection, no reply ever comes."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def timed(call) -> tuple[Exception, float]:
    started = time.monotonic()
    with pytest.raises((LLMError, CaptionerError)) as error:
        call()
    return error.value, time.monotonic() - started


def test_llm_server_down_fails_at_once():
    url = f"http://127.0.0.1:{free_port()}/v1"
    error, seconds = timed(lambda: ServerLLM(url, timeout=30).chat([{"role": "user", "content": "hi"}]))
    assert f"{url}/chat/completions: cannot connect (is the server running?)" in str(error) and seconds < 5


def test_llm_server_that_hangs_times_out(hanging_url):
    error, seconds = timed(lambda: ServerLLM(hanging_url, timeout=TIMEOUT_S).chat([{"role": "user", "content": "hi"}]))
    assert f"{hanging_url}/chat/completions: no answer within 1 s" in str(error)
    assert TIMEOUT_S <= seconds < TIMEOUT_S + 4


def test_captioner_server_down_fails_at_once():
    url = f"http://127.0.0.1:{free_port()}/v1"
    error, seconds = timed(lambda: ServerCaptioner(url, timeout=30).caption(ClipContext(0.0, 2.0, transcript="hello")))
    assert f"{url}/chat/completions: cannot connect (is the server running?)" in str(error) and seconds < 5


def test_captioner_server_that_hangs_times_out(hanging_url):
    error, seconds = timed(
        lambda: ServerCaptioner(hanging_url, timeout=TIMEOUT_S).caption(ClipContext(0.0, 2.0, transcript="hello"))
    )
    assert f"{hanging_url}/chat/completions: no answer within 1 s" in str(error)
    assert TIMEOUT_S <= seconds < TIMEOUT_S + 4


def _stored(snap: dict) -> dict:
    return {k: v for k, v in snap.items() if k not in ("job", "files")}


def test_pipeline_with_the_captioner_server_down(tmp_path, reference, llm_server):
    root = reference.copy_at("captions:start", tmp_path / "lib")
    before = snapshot(root)
    env = fault_env(llm_server.url, EGODESK_CAPTIONER="server", EGODESK_SERVER_URL=f"http://127.0.0.1:{free_port()}/v1")
    ran = worker(root, env)
    assert ran.code == 0, ran
    state, error = job_states(root)["captions"]
    assert state == "failed" and "cannot connect (is the server running?)" in error, (state, error)
    assert_same(_stored(snapshot(root)), _stored(before), "after the failed captions vs before")


def test_pipeline_with_the_llm_server_hanging(tmp_path, reference, hanging_url):
    root = reference.copy_at("memory-records:start", tmp_path / "lib")
    before = snapshot(root)
    ran = worker(root, fault_env(hanging_url, EGODESK_SERVER_TIMEOUT_S=str(TIMEOUT_S)))
    assert ran.code == 0 and ran.seconds < 30, ran
    state, error = job_states(root)["memory-records"]
    assert state == "failed" and "no answer within 1 s" in error, (state, error)
    assert_same(_stored(snapshot(root)), _stored(before), "after the failed build vs before")
