"""What the fault tests share: a small worker configuration, a loopback stand-in for the LLM server,
running the import and the worker as real processes (killed, stopped or continued at fault points),
crash-consistent copies of a library, and a snapshot of everything a library stores.

The LLM of these tests is a deterministic OpenAI-compatible server on 127.0.0.1 (`FakeLLMServer`),
reached through the product's own `server` backend: the LLM-built memories run their real batch,
compression, embedding and index code, while a reply costs nothing. (llm-test with the records
schema's grammar takes ~1 s of CPU a token here, a full memory build minutes: the kill tests would
not fit their budget. tests/memory/test_records_resume.py kills a real llm-test build.)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import closing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

from egodesk.memory import indexfile

REPO = Path(__file__).resolve().parents[2]
FAULT_ENVS = ("EGODESK_KILL_AT", "EGODESK_STOP_AT", "EGODESK_ENOSPC_AT")
# 2 s clips of a 4 s video (two clips: two units of every per-clip stage, two LLM batches each).
SETTINGS_ENV = {
    "EGODESK_CLIP_SECONDS": "2",
    "EGODESK_FRAMES_PER_CLIP": "3",
    "EGODESK_KEYFRAMES_PER_CLIP": "2",
    "EGODESK_ASR_MODEL": "asr-lite",
    "EGODESK_THREADS": "2",
    "EGODESK_MEMORY_RECORDS": "true",
    "EGODESK_MEMORY_ATOMIC": "true",
    "EGODESK_RECORDS_BATCH_SIZE": "1",
    "EGODESK_ATOMIC_BATCH_SIZE": "1",
    "EGODESK_LLM_BACKEND": "server",
    "EGODESK_SERVER_TIMEOUT_S": "30",
    # one request at a time: the fault points and `fail_after` count batches in footage order (requests in
    # flight, and failures among them, are tests/memory/test_server_in_flight.py's subject)
    "EGODESK_SERVER_REQUESTS": "1",
}
ADD_SCRIPT = (
    "import sys; from egodesk.pipeline.library import Library; lib = Library(sys.argv[1]); "
    "report = lib.add([sys.argv[2]]); lib.close(); sys.exit(1 if report.errors else 0)"
)
RUN_TIMEOUT_S = 300


# ------------------------------------------------------------------------------------------ the LLM


class FakeLLMServer:
    """/v1/chat/completions answering the records and atomic schemas from the numbered entries of the
    prompt, deterministically; after `good_replies` answers (None: never) it replies with prose that is
    not JSON. Each reply takes `delay_s` (requests are served on threads, so several run at once); the
    requests numbered in `failing` get HTTP 500; from request `dies_at` on, the connection is dropped
    unanswered, as by a server that died. GET /props reports `slots` as llama.cpp's server does."""

    def __init__(self, delay_s: float = 0.0, slots: int | None = None):
        self.good_replies: int | None = None
        self.requests = 0
        self.delay_s, self.slots = delay_s, slots
        self.failing: set[int] = set()
        self.dies_at: int | None = None
        self.in_flight = self.most_in_flight = 0
        lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path != "/props" or owner.slots is None:
                    self.send_error(404)
                    return
                self._send(200, {"total_slots": owner.slots})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    owner.requests += 1
                    number = owner.requests
                    owner.in_flight += 1
                    owner.most_in_flight = max(owner.most_in_flight, owner.in_flight)
                try:
                    time.sleep(owner.delay_s)
                    if owner.dies_at is not None and number >= owner.dies_at:
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    if number in owner.failing:
                        self._send(500, {"error": {"message": "the model crashed"}})
                        return
                    self._answer(body)
                finally:
                    with lock:
                        owner.in_flight -= 1

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _answer(self, body: dict) -> None:
                garbage = owner.good_replies is not None and owner.requests > owner.good_replies
                content = "Sorry, I cannot help with that." if garbage else json.dumps(_reply(body))
                self._send(
                    200, {"choices": [{"message": {"role": "assistant", "content": content}}], "usage": {"prompt_tokens": 10}}
                )

            def log_message(self, *args):  # quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def fail_after(self, good_replies: int | None) -> None:
        self.requests, self.good_replies = 0, good_replies

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _reply(body: dict) -> dict:
    schema = (body.get("response_format") or {}).get("schema") or {}
    props = schema.get("properties", {})
    entries = dict(re.findall(r"^(\d+)\. (.*)$", body["messages"][-1]["content"], re.M))
    words = {
        int(i): [w.lower() for w in re.findall(r"[A-Za-z]{4,}", text) if w.lower() not in ("wearer", "speech")] or ["nothing"]
        for i, text in entries.items()
    }
    if "records" in props:
        ids = props["records"]["items"]["properties"]["id"]["enum"]
        return {
            "records": [
                r
                for i in ids
                for r in (
                    {"id": i, "action": "see", "object": words.get(i, ["room"])[0]},
                    {"id": i, "action": "hear", "object": words.get(i, ["room"])[-1]},
                )
            ]
        }
    if "statements" in props:
        ids = props["statements"]["items"]["properties"]["ids"]["items"]["enum"]
        return {
            "statements": [
                s
                for i in ids
                for s in (
                    {"view": "action", "text": f"I look at the {words.get(i, ['room'])[0]}.", "ids": [i]},
                    {"view": "activity", "text": f"I walk past the {words.get(i, ['room'])[-1]}.", "ids": [i]},
                )
            ]
        }
    return {"answer": "not found", "evidence": [], "reasoning": ""}


# ---------------------------------------------------------------------------------------- processes


def fault_env(llm_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in FAULT_ENVS}
    env.update(SETTINGS_ENV, EGODESK_SERVER_URL=llm_url, PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


class Ran:
    """A finished process: its exit code (-9 = killed by SIGKILL) and output."""

    def __init__(self, code: int, out: str, err: str, seconds: float):
        self.code, self.out, self.err, self.seconds = code, out, err, seconds

    def __repr__(self) -> str:
        return f"Ran(code={self.code}, {self.seconds:.1f} s, stderr tail={self.err[-1500:]!r})"


def run(cmd: list[str], env: dict[str, str], on_stop=None, timeout: float = RUN_TIMEOUT_S) -> Ran:
    """Run `cmd`; each time it stops itself (EGODESK_STOP_AT), call `on_stop()` and let it go on.
    Output goes to temporary files: a stopped child must never block on a full pipe."""
    started = time.monotonic()
    with open(os.devnull, "rb") as nothing, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdin=nothing, stdout=out, stderr=err, env=env, cwd=REPO)
        try:
            while True:
                pid, status = os.waitpid(proc.pid, os.WUNTRACED | os.WNOHANG)
                if pid == 0:
                    if time.monotonic() - started > timeout:
                        raise TimeoutError(f"{cmd[:4]} ran over {timeout} s; stderr: {_text(err)[-2000:]}")
                    time.sleep(0.02)
                elif os.WIFSTOPPED(status):
                    if on_stop is not None:
                        on_stop()
                    os.kill(proc.pid, signal.SIGCONT)
                else:
                    proc.returncode = os.waitstatus_to_exitcode(status)
                    return Ran(proc.returncode, _text(out), _text(err), time.monotonic() - started)
        except BaseException:  # never leave a stopped or running child behind
            os.kill(proc.pid, signal.SIGKILL)
            os.waitpid(proc.pid, 0)
            proc.returncode = -signal.SIGKILL
            raise


def _text(handle) -> str:
    handle.seek(0)
    return handle.read().decode("utf-8", "replace")


def add(root: Path, media: Path, env: dict[str, str], on_stop=None) -> Ran:
    return run([sys.executable, "-c", ADD_SCRIPT, str(root), str(media)], env, on_stop)


def worker(root: Path, env: dict[str, str], on_stop=None, retry_failed: bool = False) -> Ran:
    return run(
        [sys.executable, "-m", "egodesk.pipeline.worker", "--library", str(root)] + (["--retry-failed"] if retry_failed else []),
        env,
        on_stop,
    )


def has_footage(root: Path) -> bool:
    db = root / "library.sqlite"
    if not db.exists():
        return False
    with _connect(db) as con:
        return bool(con.execute("select count(*) from footage").fetchone()[0])


def import_and_index(root: Path, media: Path, env: dict[str, str], on_stop=None) -> Ran:
    """What the user does: import the file (unless it is in already), then run the worker. Returns the
    last process run (the one a kill point ended)."""
    if not has_footage(root):
        ran = add(root, media, env, on_stop)
        if ran.code != 0:
            return ran
    return worker(root, env, on_stop)


# ------------------------------------------------------------------------------------- copies


def copy_library(root: Path, dest: Path) -> Path:
    """A crash-consistent copy, also of a library a stopped process is writing: files as they are,
    the database through SQLite's backup API (committed transactions only)."""
    shutil.copytree(root, dest, ignore=shutil.ignore_patterns("library.sqlite*", "worker.pid", "logs"))
    with _connect(root / "library.sqlite") as src, _connect(dest / "library.sqlite") as dst:
        src.backup(dst)
    (dest / ".origin").write_text(str(root))  # the folder the rows' absolute paths point into
    return dest


def _connect(path: Path) -> closing[sqlite3.Connection]:
    return closing(sqlite3.connect(path, timeout=30))


# ----------------------------------------------------------------------------------- snapshots

# Columns that legitimately differ between a run and its resumed twin: clock times, attempts, and the
# bookkeeping of *saved* index files (a rebuilt graph has other bytes; the labels it serves are compared).
VOLATILE = {"updated_at", "imported_at", "built_at", "attempts", "sha256"}
VOLATILE_BY_TABLE = {"index_info": {"count", "file"}}
_DIGEST = re.compile(r'"digest": ?"[0-9a-f]+"')  # hashes over absolute thumbnail paths


def snapshot(root: Path) -> dict:
    """Every table (every column but the volatile ones; absolute paths into the library written as
    <root>), the library's files, and per index space the labels it serves: those of its saved file
    when the file passes the load checks (then they must equal the space's Vector rows), else the
    Vector rows it is rebuilt from."""
    origin_file = root / ".origin"
    roots = [origin_file.read_text(), str(root)] if origin_file.exists() else [str(root)]
    snap: dict = {}
    with _connect(root / "library.sqlite") as con:
        tables = [
            r[0]
            for r in con.execute("select name from sqlite_master where type='table' and name not like 'sqlite_%' order by name")
        ]
        for table in tables:
            skip = VOLATILE | VOLATILE_BY_TABLE.get(table, set())
            cols = [r[1] for r in con.execute(f"pragma table_info({table})") if r[1] not in skip]
            rows = con.execute(f"select {', '.join(cols)} from {table}").fetchall()
            snap[table] = sorted((tuple(_normal(v, roots) for v in row) for row in rows), key=repr)
        snap["index labels"] = _served_labels(root, con)
    snap["files"] = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and _kept_file(p.relative_to(root)))
    return snap


def _normal(value, roots: list[str]):
    if isinstance(value, str):
        for root in roots:
            value = value.replace(root, "<root>")
        return _DIGEST.sub('"digest": "-"', value)
    return value


def job_states(root: Path) -> dict[str, tuple[str, str]]:
    """stage -> (state, error) of the library's one footage."""
    with _connect(root / "library.sqlite") as con:
        return {stage: (state, error) for stage, state, error in con.execute("select stage, state, error from job")}


def _kept_file(rel: Path) -> bool:
    if rel.parts[0] in ("logs",) or rel.name.startswith(("library.sqlite", "worker.pid", ".origin")):
        return False
    return not (rel.parts[0] == "indices" and rel.suffix in (".hnsw", ".json"))  # compared by their labels


def _served_labels(root: Path, con: sqlite3.Connection) -> dict[str, list[int]]:
    out = {}
    spaces = {r[0] for r in con.execute("select distinct space from vector")} | {
        r[0] for r in con.execute("select name from index_info")
    }
    for space in sorted(spaces):
        ids = np.array(
            [r[0] for r in con.execute("select unit_id from vector where space = ? order by unit_id", (space,))], dtype=np.int64
        )
        row = con.execute("select dim, model_id, count, file, sha256 from index_info where name = ?", (space,)).fetchone()
        stored_dim = con.execute("select length(data) / 4 from vector where space = ? limit 1", (space,)).fetchone()
        served = ids.tolist()
        if row is not None and row[3]:
            reason, index, dead = indexfile.verify(
                root / "indices" / row[3],
                root / "indices" / f"{space}.json",
                indexfile.Manifest(*row),
                ids,
                stored_dim[0] if stored_dim else None,
            )
            if reason is None:  # trusted as it is: then it must hold exactly the stored vectors
                served = sorted(set(index.get_ids_list()) - set(dead))
                assert served == ids.tolist(), f"{root}: index {space} is trusted but its labels differ from its Vector rows"
        out[space] = served
    return out


def assert_same(actual: dict, expected: dict, what: str, but: tuple[str, ...] = ()) -> None:
    """Section by section (all but the sections `but` names, as "job" when a stage failed), with a short
    account of the first differences (full dumps are huge)."""
    problems = []
    for key in sorted((set(actual) | set(expected)) - set(but)):
        a, e = actual.get(key), expected.get(key)
        if a != e:
            if isinstance(a, list) and isinstance(e, list):
                extra = [r for r in a if r not in e][:3]
                missing = [r for r in e if r not in a][:3]
                problems.append(f"{key}: {len(a)} rows vs {len(e)} expected; extra {_short(extra)}; missing {_short(missing)}")
            else:
                problems.append(f"{key}: {_short(a)} != {_short(e)}")
    assert not problems, f"{what}:\n  " + "\n  ".join(problems)


def assert_resumes(root: Path, llm_url: str, final: dict, what: str) -> None:
    """A worker that retries the failed stages, the fault gone, completes the library to `final`."""
    ran = worker(root, fault_env(llm_url), retry_failed=True)
    assert ran.code == 0, ran
    assert_same(snapshot(root), final, what)


def _short(value) -> str:
    text = repr(_brief(value))
    return text if len(text) < 600 else text[:600] + "..."


def _brief(value):
    """Blobs (vectors, features, state) as their size and a short hash."""
    if isinstance(value, bytes):
        return f"<{len(value)} bytes {hashlib.sha1(value).hexdigest()[:8]}>"
    if isinstance(value, (list, tuple)):
        return type(value)(_brief(v) for v in value)
    return value


# ------------------------------------------------------------------------------- fault points

# Every fault point one import + indexing of the tiny clip passes, in the order it passes them, by the
# stage it belongs to (a trace of the run with SETTINGS_ENV; `index-save:<space>` is an index file
# written whose manifest row is not yet updated, `<builder>:batch<n>` a batch written, not committed).
# ASR's progress point `asr:<second>` is left out: it is named by where Whisper ends the segment, which
# differs with the CPU's arithmetic (asr:4 on some machines, asr:3 on an AMD EPYC), and `asr:segment`
# marks the same moment. One batch per LLM builder: the second clip's caption holds only guesses from
# image labels, which the builders are not shown (a kill between batches: tests/memory/test_records_resume.py).
POINTS_BY_STAGE = {
    "probe": ["probe:commit"],
    "audio": ["audio:start", "audio:commit"],
    "asr": ["asr:start", "asr:segment", "asr:commit"],
    "speakers": ["speakers:start", "speakers:0", "speakers:commit"],
    "keyframes": ["keyframes:start", "keyframes:1", "keyframes:commit"],
    "faces": ["faces:start", "faces:0", "faces:commit"],
    "ocr": ["ocr:start", "ocr:1", "ocr:2", "ocr:commit"],
    "captions": ["captions:start", "captions:1", "captions:2", "captions:commit"],
    "memory-parent": [
        "memory-parent:start",
        "index-save:caption",
        "index-save:transcript",
        "index-save:subchunk",
        "memory-parent:commit",
    ],
    "memory-visual": [
        "memory-visual:start",
        "index-save:visual-frame",
        "index-save:visual-clip",
        "index-save:visual-text",
        "memory-visual:commit",
    ],
    "memory-records": [
        "memory-records:start",
        "imprint:batch1",
        "index-save:record-object",
        "index-save:record-action",
        "memory-records:commit",
    ],
    "memory-atomic": [
        "memory-atomic:start",
        "egocite:batch1",
        "index-save:atomic-action",
        "index-save:atomic-activity",
        "memory-atomic:commit",
    ],
}
ALL_POINTS = [p for points in POINTS_BY_STAGE.values() for p in points]


def stage_of(point: str) -> str:
    return next(stage for stage, points in POINTS_BY_STAGE.items() if point in points)


def committed_at(point: str) -> str:
    """The point of the uninterrupted run whose committed rows a kill at `point` must leave: a stage
    that commits whole (probe and the video stages) leaves those of its start; a batch build those of
    its last committed batch (`<builder>:batch<n>` is the moment batch n-1 is in, n is not); an index
    save comes after its builder's commit."""
    stage = stage_of(point)
    if stage in ("audio", "asr", "speakers", "keyframes", "faces", "ocr", "captions"):
        return f"{stage}:start"
    if point.startswith("index-save:"):
        return f"{stage}:commit"
    if point.endswith(":batch1"):
        return f"{stage}:start"
    return point
