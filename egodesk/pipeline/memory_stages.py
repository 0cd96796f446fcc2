"""Memory-building stages, run by the same durable loop as ingest once a footage's captions and
transcripts exist: parent-child text memory and visual memory first (the footage is searchable from
then on), then the LLM-built memories (interaction records, atomic statements), which are the slow
part on a CPU and pause while a question is answered. Every builder is idempotent and the LLM ones
resume after their last committed batch, so a stage killed part-way and run again ends with the same
rows."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import func, select

from egodesk.core.types import Progress
from egodesk.memory.schema import Unit
from egodesk.pipeline.asking import wait_while_asking
from egodesk.pipeline.jobs import finish
from egodesk.pipeline.stages import Cancelled, StageContext

PAUSED = "paused: a question is being answered"


def run_parent_child(ctx: StageContext) -> None:
    from egodesk.memory.parent_child import BUILDER, build_parent_child

    build_parent_child(ctx.store, ctx.engines.index_manager, ctx.engines.embedder, ctx.footage_id, ctx.engines.settings)
    _finish(ctx, "memory-parent", BUILDER)


def run_visual(ctx: StageContext) -> None:
    from egodesk.memory.visual import BUILDER, build_visual

    build_visual(ctx.store, ctx.engines.index_manager, ctx.engines.embedder, ctx.footage_id)
    _finish(ctx, "memory-visual", BUILDER)


def run_records(ctx: StageContext) -> None:
    from egodesk.memory.record_compression import BUILDER, build_records

    _run_llm_builder(ctx, "memory-records", ctx.engines.settings.memory_records, build_records, BUILDER)


def run_atomic(ctx: StageContext) -> None:
    from egodesk.memory.atomic import BUILDER, build_atomic

    _run_llm_builder(ctx, "memory-atomic", ctx.engines.settings.memory_atomic, build_atomic, BUILDER)


def _run_llm_builder(ctx: StageContext, stage: str, enabled: bool, build, builder: str) -> None:
    """Run an LLM memory builder (switched off in settings: the stage completes with nothing built).
    Between its batches it yields to any question being answered (asking.py)."""
    if enabled:
        build(
            ctx.store,
            ctx.engines.index_manager,
            ctx.engines.embedder,
            ctx.engines.llm,
            ctx.footage_id,
            ctx.engines.settings,
            progress=ctx.progress,
            should_stop=_yielding_stop(ctx, stage),
        )
    _stop_if_asked(ctx, stage)
    _finish(ctx, stage, builder)


def _yielding_stop(ctx: StageContext, stage: str) -> Callable[[], bool]:
    """The builder's between-batches check: wait out a question in flight, then say whether to stop."""

    def check() -> bool:
        wait_while_asking(
            ctx.engines.paths, ctx.should_stop, on_pause=lambda: ctx.progress(Progress(stage, 0, 0, ctx.footage_id, PAUSED))
        )
        return ctx.should_stop()

    return check


def _stop_if_asked(ctx: StageContext, stage: str) -> None:
    """The LLM builders return early when asked to stop; the stage must then stay unfinished."""
    if ctx.should_stop():
        raise Cancelled(stage)


def _finish(ctx: StageContext, stage: str, builder: str) -> None:
    """Mark the stage done with the count of units the footage holds from its builder: what a run
    resumed after a crash reports is then what an uninterrupted one does (not only its own additions)."""
    with ctx.store.session() as session:
        held = session.scalar(
            select(func.count()).select_from(Unit).where(Unit.footage_id == ctx.footage_id, Unit.builder == builder)
        )
        finish(session, ctx.footage_id, stage, int(held or 0))


MEMORY_STAGE_FUNCTIONS = {
    "memory-parent": run_parent_child,
    "memory-visual": run_visual,
    "memory-records": run_records,
    "memory-atomic": run_atomic,
}
