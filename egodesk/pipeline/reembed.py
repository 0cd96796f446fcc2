"""The re-embedding job: a library built with another text embedder than the settings choose is
re-embedded by the worker after the queued stages (making footage searchable comes first). It stops
when asked and the next worker run continues (`egodesk resume`, or any import); questions use the
old vectors with the old embedder until the new ones are complete (see `egodesk.memory.reembed`)."""

from __future__ import annotations

from collections.abc import Callable

from egodesk.core.types import Progress
from egodesk.memory.reembed import ReembedReport, library_role, reembed
from egodesk.pipeline.engines import Engines


def needs_reembed(engines: Engines) -> bool:
    return library_role(engines.store, engines.settings.embedder_model) != engines.settings.embedder_model


def run_reembed(
    engines: Engines, progress: Callable[[Progress], None] = lambda p: None, should_stop: Callable[[], bool] = lambda: False
) -> ReembedReport | None:
    """Re-embed when needed (None when not). After the swap the engines search with the new embedder."""
    if not needs_reembed(engines):
        return None
    report = reembed(engines.store, engines.index_manager, engines.target_embedder, progress, should_stop)
    if report.swapped:
        engines.embedder_changed()
    return report
