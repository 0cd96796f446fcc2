"""The ops the window runs in worker processes. No Qt here: each runs in a spawned child.

Every op is `op(ctx, *args)` with `ctx` a `WorkerContext` (progress events, cooperative stop flag),
opens the library itself from its root folder, and returns plain picklable data.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from egodesk.core.paths import LibraryPaths
from egodesk.gui.worker import StopRequested, WorkerContext

_OPEN: dict[str, tuple[int, Any]] = {}  # root -> (settings file mtime, Library), in a warm worker


def _library(root: str):
    from egodesk.pipeline.library import Library

    return Library(Path(root))


def _kept_library(root: str):
    """The library this (warm) worker already opened, with its caches and loaded models; reopened when
    the settings changed since."""
    settings_file = LibraryPaths.at(root).settings_file
    stamp = settings_file.stat().st_mtime_ns if settings_file.exists() else 0
    kept = _OPEN.get(root)
    if kept is None or kept[0] != stamp:
        if kept is not None:
            kept[1].close()
        _OPEN[root] = (stamp, _library(root))
    return _OPEN[root][1]


def import_paths(ctx: WorkerContext, root: str, paths: list[str], resume: bool = False) -> dict[str, int]:
    """Register files and folders, then index everything unfinished through the library's one ingest
    entry point (`Library.process`: the writer lock `egodesk import` takes too; with a worker already
    running it follows that one's progress, then indexes what is left). Two steps, so that per-file
    errors reach the window at once, not after hours of indexing. `resume` first puts cancelled and
    failed stages back in line. Returns the stage outcome counts."""
    library = _library(root)
    if resume:
        library.resume()
    ctx.partial(library.add([Path(p) for p in paths]))
    outcome = library.process(ctx.progress, ctx.should_stop)
    if ctx.should_stop():
        raise StopRequested("cancelled: finished stages are kept")
    return outcome


def ask(ctx: WorkerContext, root: str, question: str, options: list[str] | None, strategy: str | None, k: int | None):
    """Run warm (see TaskRunner): the library and its models stay loaded for the next question."""
    return _kept_library(root).ask(question, options=options or None, strategy=strategy or None, k=k)


def forget(ctx: WorkerContext, root: str, footage_id: int, start: float | None = None, end: float | None = None) -> None:
    _library(root).forget(footage_id, start, end)


def verify_models(ctx: WorkerContext, user_models: str) -> dict[str, list[tuple[str, bool, str]]]:
    """Full sha256 check of every manifest file: role -> [(path, ok, reason)]."""
    from egodesk.core.manifest import check_file, load_manifest, role_dirs
    from egodesk.core.types import Progress

    manifest = load_manifest()
    total = sum(len(spec.files) for spec in manifest.values())
    out: dict[str, list[tuple[str, bool, str]]] = {}
    done = 0
    for role, spec in manifest.items():
        for file in spec.files:
            folder = next((d for d in role_dirs(role, Path(user_models)) if (d / file.name).exists()), role_dirs(role)[-1])
            check = check_file(folder / file.name, file, full=True)
            out.setdefault(role, []).append((str(check.path), check.ok, check.reason))
            done += 1
            ctx.progress(Progress("verify", done, total, message=f"{role}/{file.name}"))
    return out


PROBE_PROMPT = [{"role": "user", "content": "Reply with one short sentence: what is a camera for?"}]


def probe_llm(ctx: WorkerContext, kind: str, path: str = "", url: str = "", model: str = "", threads: int = 2) -> str:
    """Run a model the user is adding once and report what it said and how fast."""
    from egodesk.perception.llm import LocalLLM, ServerLLM

    started = time.monotonic()
    if kind == "server":
        llm: Any = ServerLLM(url, model, timeout=60.0)
    else:
        llm = LocalLLM(Path(path), threads=threads, n_ctx=512)
    loaded = time.monotonic()
    text, prompt_tokens = llm.chat(PROBE_PROMPT, max_tokens=24)
    answered = time.monotonic()
    return (
        f"{llm.model_id} answered in {answered - loaded:.1f} s (loaded in {loaded - started:.1f} s, "
        f"{prompt_tokens} prompt tokens): {text.strip()[:200]!r}"
    )


def probe_vlm(ctx: WorkerContext, model_path: str, mmproj_path: str, image_path: str, threads: int = 2) -> str:
    """Describe one image with a GGUF vision-language model and its projector."""
    import base64

    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import MTMDChatHandler

    for label, value in (("model", model_path), ("projector (mmproj)", mmproj_path), ("image", image_path)):
        if not value or not Path(value).is_file():
            raise FileNotFoundError(f"the {label} file does not exist: {value or '(none given)'}")
    started = time.monotonic()
    handler = MTMDChatHandler(clip_model_path=mmproj_path, verbose=False)
    llama = Llama(model_path, chat_handler=handler, n_ctx=4096, n_threads=threads, verbose=False)
    data = base64.b64encode(Path(image_path).read_bytes()).decode()
    reply = llama.create_chat_completion(
        [
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{data}"}},
                    {"type": "text", "text": "Describe this image in one sentence."},
                ],
            }
        ],
        max_tokens=60,
        temperature=0.0,
    )
    text = reply["choices"][0]["message"]["content"] or ""
    return f"{Path(model_path).name} described the test image in {time.monotonic() - started:.1f} s: {text.strip()[:200]!r}"
