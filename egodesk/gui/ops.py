"""The ops the window runs in worker processes. No Qt here: each runs in a spawned child.

Every op is `op(ctx, *args)` with `ctx` a `WorkerContext` (progress events, cooperative stop flag),
opens the library itself from its root folder, and returns plain picklable data. An op that changes
the library says what (`@changes`); the task runner announces it and the views showing that read it
again, so no caller refreshes a view by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from egodesk.core.paths import LibraryPaths
from egodesk.gui.worker import StopRequested, WorkerContext

_OPEN: dict[str, tuple[int, Any]] = {}  # root -> (settings file mtime, Library), in a warm worker
FOOTAGE = "footage"  # the footage list and what is stored of each (states, clips, memories)
KEPT = "kept"  # the starred moments and the notes
PEOPLE = "people"  # the voices heard, their names, and so the speakers of the lines; the faces seen
FACE_ACTIONS = ("name_face", "merge_faces", "forget_face")
VOICE_ACTIONS = ("claim_voice", "name_voice", "merge_voices", "split_voice", "forget_voice", "set_line_voice")

Op = TypeVar("Op", bound=Callable[..., Any])


def changes(*what: str) -> Callable[[Op], Op]:
    """Mark an op as changing `what` (e.g. FOOTAGE): `TaskRunner` announces it as the op goes and ends."""

    def mark(op: Op) -> Op:
        op.changes = frozenset(what)  # type: ignore[attr-defined]
        return op

    return mark


def _library(root: str):
    from egodesk.pipeline.library import Library

    return Library(Path(root))


def _library_call(root: str, call: str, *args: Any, **kwargs: Any) -> Any:
    """`Library.<call>(*args, **kwargs)` on a library opened for this one call and closed after it."""
    library = _library(root)
    try:
        return getattr(library, call)(*args, **kwargs)
    finally:
        library.close()


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


@changes(FOOTAGE)
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


@changes(FOOTAGE)
def watch_folders(ctx: WorkerContext, root: str) -> None:
    """Watch the library's watched folders until stopped (the window closing ends it): each file that has
    stopped growing is imported and indexed (`pipeline.watch`); what each scan did comes back as a
    partial result (`WatchReport`), the indexing as progress."""
    from egodesk.pipeline.watch import watch

    watch(_library(root), progress=ctx.progress, on_report=ctx.partial, should_stop=ctx.should_stop)
    raise StopRequested("stopped watching the folders")


def ask(ctx: WorkerContext, root: str, question: str, options: list[str] | None, strategy: str | None, k: int | None):
    """Run warm (see TaskRunner): the library and its models stay loaded for the next question. The
    window hears of the moments found, ("evidence", [Evidence]), and each new piece of the answer,
    ("text", str), as they come."""
    return _kept_library(root).ask(
        question,
        options=options or None,
        strategy=strategy or None,
        k=k,
        on_evidence=lambda found: ctx.partial(("evidence", found)),
        on_text=lambda piece: ctx.partial(("text", piece)),
    )


def prepare_to_answer(ctx: WorkerContext, root: str, draft: str = "", options: list[str] | None = None) -> None:
    """Run warm, while the user types a question: the LLM loaded, its answer rules evaluated and the
    prompt for the question typed so far read; a stop request (the question was asked) ends it early,
    as done, so the warm worker and its model stay."""
    _kept_library(root).prepare_to_answer(draft, options, should_stop=ctx.should_stop)


@changes(FOOTAGE)
def forget(ctx: WorkerContext, root: str, footage_id: int, start: float | None = None, end: float | None = None) -> None:
    _library(root).forget(footage_id, start, end)


@changes(KEPT)
def keep(ctx: WorkerContext, root: str, action: str, *args: Any) -> Any:
    """A change to the kept moments: `action` is the `Library` call ("star", "unstar", "add_note",
    "edit_note", "delete_note") and `args` its arguments. Its own process, like every write: a note on
    indexed footage embeds its text, and a refusal (`KeepError`) comes back as the task's message."""
    if action not in ("star", "unstar", "add_note", "edit_note", "delete_note"):
        raise ValueError(f"not a change to kept moments: {action}")
    return _library_call(root, action, *args)


@changes(FOOTAGE)
def correct(ctx: WorkerContext, root: str, action: str, *args: Any) -> Any:
    """A correction of what was misheard: `action` is the `Library` call ("correct_line",
    "undo_correction") and `args` its arguments; the line as it stands after (`CorrectedLine`). Run warm
    (see TaskRunner), as questions are: the embedder is already loaded, so the moment's memory is rebuilt
    in well under a second, and the warm library's next answer reads the corrected line. The window is
    told then (a progress event announces the change: the footage's clips and the memory panel are read
    again), and the moment's LLM-built memories are written again after it, with the LLM this worker
    keeps loaded (`Library.rebuild_llm_memories`). A refusal (`CorrectionError`) comes back as the
    task's message."""
    from egodesk.core.types import Progress

    if action not in ("correct_line", "undo_correction"):
        raise ValueError(f"not a correction: {action}")
    library = _kept_library(root)
    line = getattr(library, action)(*args, llm_memories=False)
    ctx.progress(Progress("correct", 1, 2, line.footage_id, "writing the moment's records and statements again"))
    library.rebuild_llm_memories(line)
    ctx.progress(Progress("correct", 2, 2, line.footage_id))
    return line


@changes(PEOPLE, FOOTAGE)
def people(ctx: WorkerContext, root: str, action: str, *args: Any) -> Any:
    """A change to the voices or faces: `action` is the `Library` call ("claim_voice", "name_voice",
    "merge_voices", "split_voice", "forget_voice", "set_line_voice": who said one line, or one of
    FACE_ACTIONS) and `args` its arguments. It relabels the lines, so the footage's views read again too;
    the memories showing the old names follow in `refresh_memories`, the panel's next task. A refusal
    (`PeopleError`) comes back as the task's message."""
    if action not in FACE_ACTIONS + VOICE_ACTIONS:
        raise ValueError(f"not a change to the voices or faces: {action}")
    return _library_call(root, action, *args)


@changes(FOOTAGE)
def refresh_memories(ctx: WorkerContext, root: str) -> int:
    """After a change to the voices or faces: the moments whose captions and memories still show the old
    names described and embedded again (`Library.refresh_memories`); how many."""
    return _library_call(root, "refresh_memories", ctx.progress, ctx.should_stop)


def export(ctx: WorkerContext, root: str, footage_id: int, start: float, end: float, out: str) -> Any:
    """Write a moment to an MP4 (`Library.export`); the file dialog already asked before replacing one."""
    return _library_call(root, "export", footage_id, start, end, out, overwrite=True)


def verify_models(ctx: WorkerContext, user_models: str) -> dict[str, list[tuple[str, bool, str]]]:
    """Full sha256 check of every manifest model (`check_role`, as `egodesk doctor` does): role ->
    [(path, ok, reason)]."""
    from egodesk.core.manifest import check_role, load_manifest
    from egodesk.core.types import Progress

    manifest = load_manifest()
    out: dict[str, list[tuple[str, bool, str]]] = {}
    for done, (role, spec) in enumerate(manifest.items(), start=1):
        ctx.progress(Progress("verify", done - 1, len(manifest), message=role))
        out[role] = [(str(c.path), c.ok, c.reason) for c in check_role(spec, Path(user_models), full=True).files]
    ctx.progress(Progress("verify", len(manifest), len(manifest), message="done"))
    return out


def probe_llm(ctx: WorkerContext, kind: str, path: str = "", url: str = "", model: str = "", threads: int = 2) -> str:
    """Run a model the user is adding once and report what it said and how fast."""
    from egodesk.pipeline.model_probe import probe_llm as probe

    return probe(kind, path, url, model, threads)


def probe_vlm(ctx: WorkerContext, model_path: str, mmproj_path: str, image_path: str, threads: int = 2) -> str:
    """Describe one image with a GGUF vision-language model and its projector."""
    from egodesk.pipeline.model_probe import probe_vlm as probe

    return probe(model_path, mmproj_path, image_path, threads)
