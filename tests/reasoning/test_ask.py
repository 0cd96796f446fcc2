from egodesk.core.types import ABSTENTION
from egodesk.reasoning.ask import ask
from tests.reasoning.test_answerer import ScriptedLLM
from tests.retrieval.conftest import DAY1, built, ts  # noqa: F401  (a fixture)


def test_ask_retrieves_then_answers_with_cited_evidence(built, embedder):
    store, indices = built
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "The latest take paper before the question.",
                       "answer": "From 09:00:50 to 09:00:55"})
    answer = ask(store, indices, embedder, llm, "When was the last time I did this: take paper?",
                 options=["From 09:00:00 to 09:00:05", "From 09:00:50 to 09:00:55"], asked_at=ts(DAY1, 100), k=4, sources=["kitchen"])
    assert answer.option_index == 1 and answer.grounded and answer.cited
    assert all(ev.start < ts(DAY1, 100) for ev in answer.evidence)
    assert "retrieval_s" in answer.timings and answer.extra["strategy"] == "auto"
    messages = llm.sent[0][0]
    assert "I take paper." in messages[1]["content"] and "Asked at: Wed 13 March 2024 09:01:40" in messages[1]["content"]


def test_ask_abstains_when_the_model_finds_nothing(built, embedder):
    store, indices = built
    llm = ScriptedLLM({"evidence": [], "reasoning": "Nothing about a parrot.", "answer": "NOT_FOUND"})
    answer = ask(store, indices, embedder, llm, "What is the name of Melanie's parrot?", strategy="hybrid", k=3)
    assert answer.abstained and answer.text == ABSTENTION
