"""An LLM whose answer is not valid JSON: `chat_json` retries the configured number of times, then
raises an LLMError that names the model and shows the reply; the answerer turns it into an abstention
carrying the error; a memory build fails its job with that message, keeping every batch it had
committed, and a resume once the LLM answers again completes it exactly."""

from __future__ import annotations

import pytest

from egodesk.core.types import Evidence
from egodesk.perception.llm import JSON_RETRIES, LLMError, chat_json
from egodesk.reasoning.answerer import ABSTENTION, answer_question
from tests.doubles import ScriptedLLM
from tests.faults.harness import assert_resumes, assert_same, fault_env, job_states, snapshot, worker

pytestmark = pytest.mark.faults


def test_retries_then_a_clear_error():
    llm = ScriptedLLM("Sure! Here you go: answer A", "{'answer': 'A'", "answer: A")
    with pytest.raises(LLMError) as error:
        chat_json(llm, [{"role": "user", "content": "q"}], {"type": "object"})
    assert llm.calls == 1 + JSON_RETRIES
    assert f"scripted did not return valid JSON after {1 + JSON_RETRIES} attempts" in str(error.value)
    assert "answer: A" in str(error.value)  # the last reply, to see what went wrong


def test_a_retry_that_answers_is_used():
    llm = ScriptedLLM("not json", '{"answer": "A"}', prompt_tokens=7)
    assert chat_json(llm, [{"role": "user", "content": "q"}], {"type": "object"}) == ({"answer": "A"}, 7)
    assert llm.calls == 2


def test_the_answerer_abstains_with_the_error():
    evidence = [Evidence(1, 1, "walk", 1000.0, 1005.0, "I take the plate.", 1.0)]
    answer = answer_question(ScriptedLLM("no JSON here", repeat_last=True), "What did I take?", evidence)
    assert answer.abstained and answer.text == ABSTENTION and not answer.cited
    assert "did not return valid JSON" in answer.extra["error"]


@pytest.fixture
def flaky_llm(llm_server):
    yield llm_server
    llm_server.fail_after(None)


def test_a_failed_memory_build_fails_the_job_keeps_nothing_half_built_and_resumes(tmp_path, reference, flaky_llm):
    root = reference.copy_at("memory-records:start", tmp_path / "lib")
    flaky_llm.fail_after(0)  # the batch gets only prose (the clip's one batch: the other clip holds label guesses alone)
    ran = worker(root, fault_env(flaky_llm.url))
    assert ran.code == 0, ran
    state, error = job_states(root)["memory-records"]
    assert state == "failed" and f"did not return valid JSON after {1 + JSON_RETRIES} attempts" in error, (state, error)
    assert job_states(root)["memory-atomic"][0] == "pending"  # later stages wait for it
    # exactly the library of the uninterrupted run before its batch was in: nothing half-built kept
    before = snapshot(reference.copies["memory-records:start"])
    assert_same(snapshot(root), before, "after the failed build vs the uninterrupted run before its batch", but=("job",))

    flaky_llm.fail_after(None)
    assert_resumes(root, flaky_llm.url, reference.final, "resumed build vs the uninterrupted run")
