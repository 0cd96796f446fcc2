"""The one OpenAI-compatible chat client shared by the server captioner and the server LLM: URL forms,
waiting out a busy server, and errors that name the endpoint and the cause (against a mock transport)."""

from __future__ import annotations

import json

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


def _events(*pieces: str, usage: dict | None = None) -> bytes:
    chunks = [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    chunks.append({"choices": [], "usage": usage or {}})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"


def test_a_streamed_reply_reaches_the_caller_piece_by_piece_and_whole():
    sent = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        if sent[-1].get("stream"):
            return httpx.Response(200, content=_events("A ", "kitchen", ".", usage={"prompt_tokens": 9}))
        return httpx.Response(200, json={**REPLY, "usage": {"prompt_tokens": 9}})

    pieces: list[str] = []
    llm = ServerLLM("http://h:1", transport=httpx.MockTransport(handle))
    assert llm.chat([{"role": "user", "content": "hi"}], on_text=pieces.append) == ("A kitchen.", 9)
    assert pieces == ["A ", "kitchen", "."] and sent[0]["stream"] is True
    assert llm.chat([{"role": "user", "content": "hi"}]) == ("A kitchen.", 9)  # not streamed: the same reply, in one
    assert "stream" not in sent[1]


def test_a_broken_stream_is_an_error_that_names_the_endpoint():
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=b"data: {not json\n\n"))
    with pytest.raises(LLMError, match="h:1.*malformed stream event"):
        ServerLLM("http://h:1", transport=transport).chat([{"role": "user", "content": "hi"}], on_text=print)
