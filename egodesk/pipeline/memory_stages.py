"""Memory-building stages, run by the same durable loop as ingest once a footage's captions and
transcripts exist: parent-child text memory and visual memory first (the footage is searchable from
then on), then the LLM-built memories (interaction records, atomic statements), which are the slow
part on a CPU. Every builder is idempotent and the LLM ones resume after their last committed batch,
so a stage killed part-way and run again ends with the same rows."""

from __future__ import annotations

from egodesk.pipeline.jobs import finish
from egodesk.pipeline.stages import Cancelled, StageContext


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


def run_records(ctx: StageContext) -> None:
    from egodesk.memory.records import build_records

    _run_llm_builder(ctx, "memory-records", ctx.engines.settings.memory_records, build_records)


def run_atomic(ctx: StageContext) -> None:
    from egodesk.memory.atomic import build_atomic

    _run_llm_builder(ctx, "memory-atomic", ctx.engines.settings.memory_atomic, build_atomic)


def _run_llm_builder(ctx: StageContext, stage: str, enabled: bool, builder) -> None:
    """Run an LLM memory builder (switched off in settings: the stage completes with nothing built)."""
    report = {}
    if enabled:
        report = builder(ctx.store, ctx.engines.index_manager, ctx.engines.embedder, ctx.engines.llm, ctx.footage_id,
                         ctx.engines.settings, progress=ctx.progress, should_stop=ctx.should_stop)
    _stop_if_asked(ctx, stage)
    with ctx.store.session() as session:
        finish(session, ctx.footage_id, stage, _count(report))


def _stop_if_asked(ctx: StageContext, stage: str) -> None:
    """The LLM builders return early when asked to stop; the stage must then stay unfinished."""
    if ctx.should_stop():
        raise Cancelled(stage)


def _count(report) -> int:
    """Units a builder wrote: builders report `units`; the LLM builders `records` or `statements`."""
    if isinstance(report, dict):
        return int(report.get("records", report.get("statements", 0)) or 0)
    return int(getattr(report, "units", 0) or 0)


MEMORY_STAGE_FUNCTIONS = {"memory-parent": run_parent_child, "memory-visual": run_visual,
                          "memory-records": run_records, "memory-atomic": run_atomic}
