"""The indexing stages: their names and their order, in one place the pipeline, the library's views and
the benchmarks read.

A media footage goes through `VIDEO_STAGES` (what makes it searchable: its sound, who spoke, its
pictures, whose faces are in them, the text on screen, its captions), then `MEMORY_STAGES` (the memories built from those).
`LLM_STAGES` are the memories a language model writes: slow on a CPU, so they wait until every footage
is searchable. A text track (imported subtitles or transcripts) has its own first stage, `TEXT`, then the
memory stages. `rank` orders any stage name the way a person reads a footage's progress.
"""

from __future__ import annotations

TEXT = "text"
VIDEO_STAGES = ("probe", "audio", "asr", "speakers", "keyframes", "faces", "ocr", "captions")
MEMORY_STAGES = ("memory-parent", "memory-visual", "memory-records", "memory-atomic")
LLM_STAGES = ("memory-records", "memory-atomic")
PIPELINE_STAGES = VIDEO_STAGES + MEMORY_STAGES

_ORDER = {stage: i for i, stage in enumerate((TEXT,) + PIPELINE_STAGES)}


def rank(stage: str) -> int:
    """A stage's place in the order a footage goes through them (an unknown name last)."""
    return _ORDER.get(stage, len(_ORDER))


def is_searchable(stages: dict[str, str]) -> bool:
    """Every stage a search needs is done (the LLM-built memories may still be building)."""
    return all(state == "done" for stage, state in stages.items() if stage not in LLM_STAGES)
