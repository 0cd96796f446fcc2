"""Memory-building stages, run by the same durable loop as ingest once a footage's captions and
transcripts exist: parent-child text memory and visual memory. Each builder replaces what it built
before for the footage, in one transaction with its job's done mark."""

from __future__ import annotations

from egodesk.pipeline.jobs import finish
from egodesk.pipeline.stages import StageContext


def run_parent_child(ctx: StageContext) -> None:
    from egodesk.memory.parent_child import build_parent_child

    report = build_parent_child(ctx.store, ctx.engines.index_manager, ctx.engines.embedder, ctx.footage_id, ctx.engines.settings)
    with ctx.store.session() as session:
        finish(session, ctx.footage_id, "memory-parent", _count(report))


def run_visual(ctx: StageContext) -> None:
    from egodesk.memory.visual import build_visual

    report = build_visual(ctx.store, ctx.engines.index_manager, ctx.engines.embedder, ctx.footage_id)
    with ctx.store.session() as session:
        finish(session, ctx.footage_id, "memory-visual", _count(report))


def _count(report) -> int:
    if isinstance(report, dict):
        return int(sum(v for v in report.values() if isinstance(v, (int, float))))
    return int(getattr(report, "units", 0) or 0)


MEMORY_STAGE_FUNCTIONS = {"memory-parent": run_parent_child, "memory-visual": run_visual}
