"""The one client for an OpenAI-compatible chat server (llama.cpp's server, vLLM, Ollama): the server
captioner and the server LLM both send their requests through it, so they accept the same URLs, fail
with the same messages and wait out a busy server the same way.

A busy server (HTTP 429 or 503) is asked again after its `Retry-After` or an exponential back-off, a
few times, before the error reaches the caller; every other failure reaches it at once, as a
`ServerError` whose message names the endpoint and the cause.
"""

from __future__ import annotations

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

    def post(self, body: dict) -> dict:
        """The server's JSON reply to one chat completion request."""
        import httpx

        for attempt in range(self.retries + 1):
            try:
                response = self._client.post(self.endpoint, json=body)
            except httpx.ConnectError as exc:
                raise ServerError(f"{self.endpoint}: cannot connect (is the server running?) ({exc})") from exc
            except httpx.TimeoutException as exc:
                raise ServerError(f"{self.endpoint}: no answer within {self.timeout:g} s") from exc
            except httpx.HTTPError as exc:
                raise ServerError(f"{self.endpoint}: request failed ({exc})") from exc
            if response.status_code in BUSY_STATUSES and attempt < self.retries:
                self._sleep(_retry_after(response) or self.backoff_s * 2**attempt)
                continue
            if response.status_code >= 400:
                raise ServerError(
                    f"{self.endpoint}: HTTP {response.status_code} ({_error_reason(response)})", response.status_code
                )
            try:
                return response.json()
            except ValueError:
                raise ServerError(f"{self.endpoint}: malformed response (not JSON): {response.text[:200]!r}") from None
        raise AssertionError("unreachable: the last attempt returns or raises")


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
