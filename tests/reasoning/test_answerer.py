import json

import pytest

from egodesk.core.types import ABSTENTION
from egodesk.perception.llm import LLMError
from egodesk.reasoning import prompt
from egodesk.reasoning.answerer import answer_question, partial_field
from egodesk.reasoning.prompt import NOT_FOUND, build_prompt, prompt_head
from tests.doubles import ScriptedLLM
from tests.reasoning.test_prompt import EVIDENCE, ev


def test_multiple_choice_answer_cites_given_evidence():
    llm = ScriptedLLM({"evidence": ["E2"], "reasoning": "E2 shows it.", "answer": "paper"})
    answer = answer_question(llm, "What did I take?", EVIDENCE, ["plate", "paper", "cup"], None)
    assert answer.option_index == 1 and answer.text == "paper" and answer.grounded and not answer.abstained
    assert answer.cited == [7] and answer.tokens == 321 and answer.reasoning == "E2 shows it."
    assert llm.sent[0][1]["properties"]["evidence"]["items"]["enum"] == ["E1", "E2", "E3"]
    assert "\n- paper\n" in llm.sent[0][0][1]["content"] and "written exactly as listed" in llm.sent[0][0][0]["content"]


def test_multiple_choice_answered_with_a_letter_when_set():
    llm = ScriptedLLM({"evidence": ["E2"], "reasoning": "E2 shows it.", "answer": "B"})
    answer = answer_question(llm, "What did I take?", EVIDENCE, ["plate", "paper", "cup"], None, choice="letter")
    assert answer.option_index == 1 and answer.text == "paper" and "\nB. paper\n" in llm.sent[0][0][1]["content"]


def test_answer_citing_nothing_is_ungrounded_and_becomes_the_abstention():
    mc = answer_question(ScriptedLLM({"evidence": [], "reasoning": "guess", "answer": "x"}), "q", EVIDENCE, ["x", "y"])
    assert mc.option_index is None and not mc.grounded and mc.abstained and mc.extra["unsupported"].endswith("'x'")
    open_ = answer_question(ScriptedLLM({"evidence": [], "reasoning": "none", "answer": "a bowl"}), "q", EVIDENCE)
    assert open_.abstained and open_.text == ABSTENTION and not open_.grounded
    said = answer_question(ScriptedLLM({"evidence": ["E1"], "reasoning": "-", "answer": NOT_FOUND}), "q", EVIDENCE)
    assert said.abstained and said.text == ABSTENTION


def test_invented_evidence_ids_are_dropped():
    answer = answer_question(ScriptedLLM({"evidence": ["E7"], "reasoning": "-", "answer": "the bin"}), "q", EVIDENCE)
    assert answer.cited == [] and answer.abstained


def test_evidence_written_as_anything_but_a_list_of_ids_cites_only_the_ids():
    nested = ScriptedLLM({"evidence": [["E3"], {"id": "E1"}, 3, "E3"], "reasoning": "-", "answer": "washed a plate"})
    assert answer_question(nested, "q", EVIDENCE).cited == [9]
    loose = ScriptedLLM({"evidence": "E3", "reasoning": "-", "answer": "washed a plate"})
    assert answer_question(loose, "q", EVIDENCE).abstained  # a bare string is not a list of ids


def test_open_answer_with_citation():
    answer = answer_question(ScriptedLLM({"evidence": ["E3"], "reasoning": "-", "answer": "washed a plate"}), "q", EVIDENCE)
    assert answer.text == "washed a plate" and answer.cited == [9] and answer.grounded


def test_an_open_answer_of_punctuation_alone_becomes_the_abstention():
    for text in (",", " - ", "…"):
        answer = answer_question(ScriptedLLM({"evidence": ["E3"], "reasoning": "-", "answer": text}), "q", EVIDENCE)
        assert answer.abstained and answer.text == ABSTENTION and "no line shown holds" in answer.extra["unsupported"]


def test_an_open_answer_no_shown_line_holds_becomes_the_abstention():
    lines = [ev(1, 1000.0, "I put my keys on the shelf by the door."), ev(2, 2000.0, "I see a cat on the sofa.")]
    invented = answer_question(
        ScriptedLLM({"evidence": ["E1"], "reasoning": "-", "answer": "front yard"}), "Where did I park my car?", lines
    )
    assert invented.abstained and invented.text == ABSTENTION and "holds any of its words" in invented.extra["unsupported"]
    for held in ("on the shelf", "the keys were on shelves", "Tuesday at 16:40", "yes, likely", "2"):
        answer = answer_question(ScriptedLLM({"evidence": ["E1"], "reasoning": "-", "answer": held}), "q", lines)
        assert not answer.abstained and answer.text == held, held


def test_an_answer_spelled_otherwise_than_its_line_is_held_and_a_different_word_is_not():
    lines = [
        ev(1, 1000.0, "Dinner is ready at eight. [on screen: 'LASAGNE', 'OVEN 180 C']"),
        ev(2, 2000.0, "I walk into the garden."),
    ]
    kept = answer_question(ScriptedLLM({"evidence": ["E1"], "reasoning": "-", "answer": "lasagna"}), "What is for dinner?", lines)
    assert not kept.abstained and kept.text == "lasagna"
    for other in ("the garage", "pizza", "a casserole"):
        answer = answer_question(ScriptedLLM({"evidence": ["E2"], "reasoning": "-", "answer": other}), "Where was I?", lines)
        assert answer.abstained, other


def test_llm_failure_becomes_an_abstention_with_the_reason():
    answer = answer_question(ScriptedLLM("not json", "still not", "nope"), "q", EVIDENCE)
    assert answer.abstained and "did not return valid JSON" in answer.extra["error"]
    broken = answer_question(ScriptedLLM(LLMError("server down")), "q", EVIDENCE)
    assert broken.abstained and broken.extra["error"] == "server down"


@pytest.mark.slow  # a real model: ~10 s alone, minutes when the machine is busy
def test_real_tiny_model_returns_a_schema_valid_answer(tiny_llm):
    answer = answer_question(tiny_llm, "What did I take first?", EVIDENCE, ["paper", "plate"], None)
    assert answer.option_index in (0, 1) and 0 < answer.tokens < 600
    assert set(answer.cited) <= {3, 7, 9}
    assert answer.text in ("paper", "plate")


@pytest.mark.slow
def test_real_tiny_model_keeps_its_reasoning_to_the_length_the_schema_allows(tiny_llm, monkeypatch):
    """The grammar, not the prompt, holds a rambling reasoning short; the reply stays valid JSON."""
    monkeypatch.setattr(prompt, "REASONING_CHARS", 4)  # uncapped, this reply reasons in 10
    answer = answer_question(tiny_llm, "What did I take first? Explain every step in detail.", EVIDENCE, ["paper", "plate"], None)
    assert answer.text in ("paper", "plate") and len(answer.reasoning) <= 4


def test_a_json_field_is_decoded_wherever_the_reply_is_cut():
    reply = json.dumps({"evidence": ["E1"], "reasoning": 'the "answer": is here', "answer": 'a blue bowl\n"é" \\ ok'})
    final = json.loads(reply)["answer"]
    seen = [partial_field(reply[:cut], "answer") for cut in range(len(reply) + 1)]
    values = [v for v in seen if v is not None]
    assert values[-1] == final and all(final.startswith(v) for v in values)  # never a wrong or unescaped character
    assert seen[reply.index('"answer": "') + 9] is None  # not begun: the key inside the reasoning does not count
    assert partial_field('{"answer": "caf\\u00', "answer") == "caf"  # a cut escape waits for its end


def test_the_answer_streams_as_it_is_written_and_the_final_check_still_decides():
    pieces = []
    llm = ScriptedLLM({"evidence": ["E2"], "reasoning": "I folded paper at 00:16:40.", "answer": "I folded the paper"})
    out = answer_question(llm, "What did I do with the paper?", EVIDENCE, on_text=pieces.append)
    assert len(pieces) > 2 and "".join(pieces) == out.text == "I folded the paper"
    assert "withdrawn" not in out.extra

    pieces.clear()
    llm = ScriptedLLM({"evidence": [], "reasoning": "Nothing says.", "answer": "NOT_FOUND"})
    out = answer_question(llm, "Where are my keys?", EVIDENCE, on_text=pieces.append)
    assert out.abstained and pieces == []  # the not-found marker is never shown as words

    llm = ScriptedLLM({"evidence": [], "reasoning": "A guess.", "answer": "On the table"})
    out = answer_question(llm, "Where are my keys?", EVIDENCE, on_text=pieces.append)
    assert out.abstained and "".join(pieces) == "On the table" and out.extra["withdrawn"] == "On the table"


def test_every_question_of_a_kind_starts_with_the_same_kept_head():
    llm = ScriptedLLM(*[{"evidence": ["E1"], "reasoning": "r", "answer": "x"}] * 2)
    kept = []
    llm.keep_prefix = kept.append
    answer_question(llm, "What did I fold?", EVIDENCE)
    answer_question(llm, "What did I wash?", EVIDENCE[2:])
    assert kept[0] == kept[1] == prompt_head()
    for messages, _ in llm.sent:
        assert messages[0] == kept[0][0] and messages[1]["content"].startswith(kept[0][1]["content"])
    options = ["paper", "plate"]
    head = prompt_head(options)
    assert head[0] != prompt_head()[0]
    assert build_prompt("q", EVIDENCE, options, None, 500, len).messages[0] == head[0]
