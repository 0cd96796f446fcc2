"""The stages' one order: what makes a footage searchable first, the memories after, the language model's
last; a text track's own stage before all; a name the order does not know after every known one."""

from egodesk.core.stages import LLM_STAGES, MEMORY_STAGES, PIPELINE_STAGES, TEXT, VIDEO_STAGES, rank


def test_the_pipeline_is_the_video_stages_then_the_memory_stages():
    assert PIPELINE_STAGES == VIDEO_STAGES + MEMORY_STAGES
    assert set(LLM_STAGES) <= set(MEMORY_STAGES) and MEMORY_STAGES[-len(LLM_STAGES) :] == LLM_STAGES
    assert VIDEO_STAGES.index("speakers") == VIDEO_STAGES.index("asr") + 1  # who spoke is attached to the lines ASR wrote


def test_rank_orders_any_stage_name_as_a_footage_goes_through_them():
    names = ["memory-atomic", "unknown-stage", "asr", TEXT, "captions", "probe", "memory-parent"]
    assert sorted(names, key=rank) == [TEXT, "probe", "asr", "captions", "memory-parent", "memory-atomic", "unknown-stage"]
