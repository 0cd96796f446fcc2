"""The one OpenAI-compatible chat client shared by the server captioner and the server LLM: URL forms,
waiting out a busy server, and errors that name the endpoint and the cause (against a mock transport)."""

from __future__ import annotations

import httpx
import pytest

from egodesk.perception.captioner import CaptionerError, ClipContext, ServerCaptioner
from egodesk.perception.chat_server import MAX_WAIT_S, ChatServer, ServerError, chat_endpoint
from egodesk.perception.llm import LLMError, ServerLLM

REPLY = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "A kitchen."}}], "usage": {"prompt_tokens": 7}}


def test_every_url_form_reaches_the_same_endpoint_for_both_clients():
    urls = ("http://h:8080", "http://h:8080/", "http://h:8080/v1", "http://h:8080/v1/chat/completions")
    assert {chat_endpoint(u) for u in urls} == {"http://h:8080/v1/chat/completions"}
    seen = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json=REPLY)

    for url in urls:
        assert ServerLLM(url, transport=httpx.MockTransport(handle)).chat([{"role": "user", "content": "hi"}]) == (
            "A kitchen.",
            7,
        )
    assert set(seen) == {"http://h:8080/v1/chat/completions"}


@pytest.mark.parametrize("status", [429, 503])
def test_a_busy_server_is_asked_again_after_its_retry_after_or_a_growing_back_off(status):
    replies = iter(
        [
            httpx.Response(status, headers={"Retry-After": "2"}),
            httpx.Response(status, headers={"Retry-After": "3600"}),
            httpx.Response(status),
            httpx.Response(200, json=REPLY),
        ]
    )
    waits: list[float] = []
    server = ChatServer("http://h/v1", transport=httpx.MockTransport(lambda request: next(replies)), sleep=waits.append)
    assert server.post({"messages": []}) == REPLY
    assert waits == [2.0, MAX_WAIT_S, 4.0]  # its own wait, capped; then the third back-off step (1, 2, 4 s)


def test_a_server_busy_beyond_the_retries_fails_with_its_status():
    calls = []

    def busy(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(503, json={"error": {"message": "all slots busy"}})

    server = ChatServer("http://h/v1", transport=httpx.MockTransport(busy), retries=2, sleep=lambda s: None)
    with pytest.raises(ServerError) as error:
        server.post({"messages": []})
    assert error.value.status == 503 and len(calls) == 3
    assert str(error.value) == "http://h/v1/chat/completions: HTTP 503 (all slots busy)"


def test_other_errors_are_not_retried_and_read_alike_from_both_clients():
    calls = []

    def refuse(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(401, json={"error": {"message": "bad API key"}})

    transport = httpx.MockTransport(refuse)
    with pytest.raises(LLMError) as from_llm:
        ServerLLM("http://h:1", transport=transport).chat([{"role": "user", "content": "hi"}])
    with pytest.raises(CaptionerError) as from_captioner:
        ServerCaptioner("http://h:1", transport=transport).caption(ClipContext(start=0.0, end=2.0, transcript="hello"))
    assert str(from_llm.value) == str(from_captioner.value) == "http://h:1/v1/chat/completions: HTTP 401 (bad API key)"
    assert len(calls) == 2  # one request each
