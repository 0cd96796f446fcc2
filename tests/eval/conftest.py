"""The tiny benchmark the eval tests run on: two footages, three questions (last-time, single-hop and
an unanswerable adversarial one)."""

import json

import pytest

MEMORY = [
    {
        "id": "m1",
        "source": "s1",
        "start": "2024-01-01T09:00:00",
        "end": "2024-01-01T09:00:10",
        "kind": "narration",
        "text": "I take paper.",
    },
    {
        "id": "m2",
        "source": "s1",
        "start": "2024-01-01T09:00:10",
        "end": "2024-01-01T09:00:20",
        "kind": "narration",
        "text": "I fold paper.",
    },
    {
        "id": "m3",
        "source": "s1",
        "start": "2024-01-01T09:00:20",
        "end": "2024-01-01T09:00:30",
        "kind": "narration",
        "text": "I open the fridge.",
    },
    {
        "id": "m4",
        "source": "s1",
        "start": "2024-01-01T09:00:30",
        "end": "2024-01-01T09:00:40",
        "kind": "narration",
        "text": "I take paper.",
    },
    {
        "id": "m5",
        "source": "s2",
        "start": "2024-01-02T18:00:00",
        "end": "2024-01-02T18:00:20",
        "kind": "transcript",
        "text": "Ana: I adopted a grey cat named Pixel.",
    },
    {
        "id": "m6",
        "source": "s2",
        "start": "2024-01-02T18:00:20",
        "end": "2024-01-02T18:00:40",
        "kind": "transcript",
        "text": "Ben: Lovely, my dog hates cats.",
    },
]
QUESTIONS = [
    {
        "id": "q1",
        "question": "When was the last time I did this: take paper?",
        "options": ["From 09:00:00 to 09:00:10", "From 09:00:30 to 09:00:40"],
        "answer_idx": 1,
        "answer": None,
        "asked_at": "2024-01-01T09:01:00",
        "sources": ["s1"],
        "evidence": [{"source": "s1", "start": "2024-01-01T09:00:30", "end": "2024-01-01T09:00:40"}],
        "category": "last-time",
        "unanswerable": False,
    },
    {
        "id": "q2",
        "question": "What is the name of Ana's cat?",
        "options": None,
        "answer_idx": None,
        "answer": "Pixel",
        "asked_at": "2024-01-03T10:00:00",
        "sources": ["s2"],
        "evidence": [{"source": "s2", "start": "2024-01-02T18:00:00", "end": "2024-01-02T18:00:20"}],
        "category": "single-hop",
        "unanswerable": False,
    },
    {
        "id": "q3",
        "question": "What is the name of Ben's parrot?",
        "options": None,
        "answer_idx": None,
        "answer": None,
        "asked_at": "2024-01-03T10:00:00",
        "sources": ["s2"],
        "evidence": [],
        "category": "adversarial",
        "unanswerable": True,
    },
]


@pytest.fixture
def bench(tmp_path):
    root = tmp_path / "tiny-bench"
    root.mkdir()
    (root / "memory.jsonl").write_text("\n".join(json.dumps(r) for r in MEMORY) + "\n")
    (root / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in QUESTIONS) + "\n")
    return root
