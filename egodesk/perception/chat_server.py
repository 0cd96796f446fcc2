"""The one client for an OpenAI-compatible chat server (llama.cpp's server, vLLM, Ollama): the server
captioner and the server LLM both send their requests through it, so they accept the same URLs, fail
with the same messages and wait out a busy server the same way.

A busy server (HTTP 429 or 503) is asked again after its `Retry-After` or an exponential back-off, a
few times, before the error reaches the caller; every other failure reaches it at once, as a
`ServerError` whose message names the endpoint and the cause. A reply can be streamed (server-sent
events); the caller gets the same reply either way.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

BUSY_STATUSES = frozenset({429, 503})
RETRIES = 3  # a busy server is asked up to this many more times
BACKOFF_S = 1.0  # first wait after a busy reply without Retry-After; doubled each time
MAX_WAIT_S = 30.0  # the longest a Retry-After is honoured
CONNECT_S = 10.0  # connecting fails fast (a closed port); an answer may take as long as the user allows
DEFAULT_IN_FLIGHT = 4  # requests at once for a server that does not say how many it runs


class ServerError(RuntimeError):
    """The request failed; `status` is the HTTP status when the server answered with an error."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


def chat_endpoint(url: str) -> str:
    """Accept 'http://host:port', '.../v1' or the full '.../v1/chat/completions'."""
    url = url.strip().rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    return url + ("/chat/completions" if url.endswith("/v1") else "/v1/chat/completions")


class ChatServer:
    def __init__(
        self,
        url: str,
        timeout: float = 120.0,
        transport: Any = None,
        retries: int = RETRIES,
        backoff_s: float = BACKOFF_S,
        sleep: Callable[[float], None] = time.sleep,
    ):
        import httpx

        self.endpoint = chat_endpoint(url)
        self.timeout = timeout
        self.retries, self.backoff_s, self._sleep = retries, backoff_s, sleep
        self._client = httpx.Client(timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_S)), transport=transport)

    def close(self) -> None:
        self._client.close()

    def slots(self) -> int | None:
        """How many requests the server runs at once, where it says so (llama.cpp's server:
        `total_slots` in GET /props); None when it does not answer that."""
        import httpx

        base = self.endpoint.removesuffix("/chat/completions").removesuffix("/v1")
        try:
            response = self._client.get(f"{base}/props", timeout=min(self.timeout, CONNECT_S))
            slots = int(response.json()["total_slots"]) if response.status_code == 200 else 0
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            return None
        return slots if slots > 0 else None

    def post(self, body: dict, on_delta: Callable[[str], None] | None = None) -> dict:
        """The server's JSON reply to one chat completion request. With `on_delta` the reply is streamed:
        each new piece of its text goes to `on_delta` as it arrives, and the whole is returned as a
        non-streamed reply would be."""
        import httpx

        if on_delta is not None:
            body = {**body, "stream": True, "stream_options": {"include_usage": True}}
        for attempt in range(self.retries + 1):
            try:
                with self._client.stream("POST", self.endpoint, json=body) as response:
                    if response.status_code in BUSY_STATUSES and attempt < self.retries:
                        response.read()
                        wait = _retry_after(response) or self.backoff_s * 2**attempt
                    elif response.status_code >= 400:
                        response.read()
                        raise ServerError(
                            f"{self.endpoint}: HTTP {response.status_code} ({_error_reason(response)})", response.status_code
                        )
                    elif on_delta is not None:
                        return self._read_events(response, on_delta)
                    else:
                        response.read()
                        return self._read_json(response)
            except httpx.ConnectError as exc:
                raise ServerError(f"{self.endpoint}: cannot connect (is the server running?) ({exc})") from exc
            except httpx.TimeoutException as exc:
                raise ServerError(f"{self.endpoint}: no answer within {self.timeout:g} s") from exc
            except httpx.HTTPError as exc:
                raise ServerError(f"{self.endpoint}: request failed ({exc})") from exc
            self._sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _read_json(self, response: Any) -> dict:
        try:
            return response.json()
        except ValueError:
            raise ServerError(f"{self.endpoint}: malformed response (not JSON): {response.text[:200]!r}") from None

    def _read_events(self, response: Any, on_delta: Callable[[str], None]) -> dict:
        """Server-sent events ("data: {chunk}" lines, then "data: [DONE]") gathered into one reply."""
        pieces: list[str] = []
        usage: dict = {}
        for line in response.iter_lines():
            payload = line.removeprefix("data:").strip() if line.startswith("data:") else ""
            if not payload:
                continue
            if payload == "[DONE]":
                break
            try:
                chunk = json.loads(payload)
                choices = chunk.get("choices") or []
                piece = (choices[0].get("delta") or {}).get("content") or "" if choices else ""
            except (ValueError, AttributeError, IndexError) as exc:
                raise ServerError(f"{self.endpoint}: malformed stream event {payload[:200]!r}") from exc
            usage = chunk.get("usage") or usage
            if piece:
                pieces.append(piece)
                on_delta(piece)
        return {"choices": [{"message": {"content": "".join(pieces)}}], "usage": usage}


def _retry_after(response: Any) -> float | None:
    """Seconds the server asked to wait (the delta-seconds form of Retry-After), capped."""
    try:
        return min(MAX_WAIT_S, max(0.0, float(response.headers.get("retry-after", ""))))
    except ValueError:
        return None


def _error_reason(response: Any) -> str:
    try:
        error = response.json().get("error")
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return str(message)[:300]
    except (ValueError, AttributeError):
        pass
    return response.text[:300] or response.reason_phrase
