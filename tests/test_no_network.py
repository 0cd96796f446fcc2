"""Import, ask and eval with every outbound connection refused except loopback: egodesk needs no
network at run time (models come from the installation, never from a hub)."""

import ipaddress
import json
import socket

import pytest

from egodesk.eval.runner import run_eval
from egodesk.pipeline.library import Library


def _is_loopback(address) -> bool:
    if isinstance(address, (str, bytes)):  # a UNIX socket path
        return True
    host = address[0]
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


@pytest.fixture
def no_network(monkeypatch):
    attempts = []
    real_connect = socket.socket.connect

    def guarded_connect(sock, address):
        if not _is_loopback(address):
            attempts.append(address)
            raise ConnectionRefusedError(f"network access refused in this test: {address}")
        return real_connect(sock, address)

    def guarded_getaddrinfo(host, *args, **kwargs):
        if host not in (None, "localhost", "127.0.0.1", "::1"):
            attempts.append(host)
            raise socket.gaierror(f"name lookup refused in this test: {host}")
        return real_getaddrinfo(host, *args, **kwargs)

    real_getaddrinfo = socket.getaddrinfo
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    return attempts


def test_guard_really_refuses(no_network):
    with pytest.raises(OSError):
        socket.create_connection(("93.184.216.34", 80), timeout=2)
    assert no_network


def test_import_ask_and_eval_offline(no_network, library, composite_clip, tmp_path, monkeypatch):
    monkeypatch.setenv("EGODESK_LLM_MODEL", "llm-test")
    lib = Library()
    report = lib.import_paths([composite_clip])
    assert report.errors == [] and report.outcome["failed"] == 0
    answer = lib.ask("What did the speaker ask of his fellow Americans?", strategy="hybrid", k=4)
    assert answer.evidence and all(e.offset is not None for e in answer.evidence)
    assert answer.grounded or answer.abstained

    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "memory.jsonl").write_text(
        "\n".join(
            json.dumps(e)
            for e in [
                {
                    "id": "a",
                    "source": "day",
                    "start": "2024-01-01T09:00:00",
                    "end": "2024-01-01T09:00:05",
                    "kind": "narration",
                    "text": "I put the keys in the drawer.",
                },
                {
                    "id": "b",
                    "source": "day",
                    "start": "2024-01-01T09:01:00",
                    "end": "2024-01-01T09:01:05",
                    "kind": "narration",
                    "text": "I water the plants.",
                },
            ]
        )
        + "\n"
    )
    (bench / "questions.jsonl").write_text(
        json.dumps(
            {
                "id": "q",
                "question": "Where did I put the keys?",
                "options": None,
                "answer_idx": None,
                "answer": "in the drawer",
                "asked_at": "2024-01-01T10:00:00",
                "sources": ["day"],
                "evidence": [{"source": "day", "start": "2024-01-01T09:00:00", "end": "2024-01-01T09:00:05"}],
                "category": "where",
                "unanswerable": False,
            }
        )
        + "\n"
    )
    result = run_eval(bench, "hybrid", k=1, library_dir=tmp_path / "scratch", quiet=True)
    assert result["summary"]["hit@1"] == 1.0
    assert no_network == []  # nothing even tried to reach the network
