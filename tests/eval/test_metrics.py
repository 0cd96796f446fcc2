import math

import pytest

from egodesk.eval.metrics import (
    QuestionResult,
    by_category,
    hit_at_k,
    ndcg_at_k,
    normalize_answer,
    overlaps,
    percentile,
    recall_at_k,
    summarize,
    token_f1,
)

EV = [("a", 10.0, 20.0)]


def test_overlap_needs_shared_time_but_points_count_inside_or_on_edges():
    assert overlaps(0, 10, 5, 15)
    assert not overlaps(0, 10, 10, 20)  # touching slots share no time
    assert overlaps(5, 5, 0, 10) and overlaps(10, 10, 0, 10) and overlaps(0, 10, 0, 0)
    assert not overlaps(11, 11, 0, 10)
    assert overlaps(0, 10, 10, 20, touching=True) and not overlaps(0, 10, 11, 20, touching=True)
    assert hit_at_k([("a", 0, 10)], EV, 1, touching=True) == 1.0 and hit_at_k([("a", 0, 10)], EV, 1) == 0.0


def test_hit_at_k_same_source_only_and_within_k():
    retrieved = [("b", 10, 20), ("a", 0, 5), ("a", 15, 16)]
    assert hit_at_k(retrieved, EV, 2) == 0.0  # the first is another source, the second misses
    assert hit_at_k(retrieved, EV, 3) == 1.0
    assert hit_at_k([], EV, 5) == 0.0


def test_recall_is_covered_share_of_evidence_duration():
    # evidence a:[10,20] and a:[30,40] (20 s); retrieved covers [15,20] and [30,35] and [33,38] -> 5+8 = 13 s
    evidence = [("a", 10, 20), ("a", 30, 40)]
    retrieved = [("a", 15, 22), ("a", 30, 35), ("a", 33, 38), ("a", 0, 100)]
    assert recall_at_k(retrieved, evidence, 3) == pytest.approx(13 / 20)
    assert recall_at_k(retrieved, evidence, 4) == pytest.approx(1.0)
    # overlapping evidence windows are merged: [10,20] U [15,25] = 15 s, retrieved covers [20,25]
    assert recall_at_k([("a", 20, 25)], [("a", 10, 20), ("a", 15, 25)], 1) == pytest.approx(5 / 15)


def test_recall_of_point_evidence_is_share_of_points_hit():
    evidence = [("a", 5, 5), ("a", 50, 50)]
    assert recall_at_k([("a", 0, 10)], evidence, 1) == 0.5
    assert recall_at_k([("a", 0, 10), ("a", 49, 51)], evidence, 2) == 1.0


def test_hit_is_at_least_recall():
    retrieved = [("a", 12, 13)]
    assert hit_at_k(retrieved, EV, 1) >= recall_at_k(retrieved, EV, 1) == pytest.approx(0.1)


def test_ndcg_single_window():
    # one window: the ideal is gain 1 at rank 1; covering it fully at rank 2 gives 1/log2(3)
    assert ndcg_at_k([("a", 0, 5), ("a", 10, 20)], EV, 5) == pytest.approx(1 / math.log2(3))
    assert ndcg_at_k([("a", 10, 20)], EV, 5) == pytest.approx(1.0)
    # half the window at rank 1, the other half at rank 3: 0.5 + 0.5/2 = 0.75
    assert ndcg_at_k([("a", 10, 15), ("b", 0, 100), ("a", 15, 20)], EV, 5) == pytest.approx(0.75)
    # a repeat of an already covered moment earns nothing
    assert ndcg_at_k([("a", 10, 15), ("a", 10, 15)], EV, 5) == pytest.approx(0.5)
    assert ndcg_at_k([("a", 0, 5)], EV, 5) == 0.0


def test_ndcg_two_windows_ideal_is_largest_first():
    evidence = [("a", 0, 30), ("a", 100, 110)]  # shares 0.75, 0.25
    idcg = 0.75 + 0.25 / math.log2(3)
    assert ndcg_at_k([("a", 100, 110), ("a", 0, 30)], evidence, 5) == pytest.approx((0.25 + 0.75 / math.log2(3)) / idcg)


def test_squad_normalisation_and_f1():
    assert normalize_answer("The  Cat, sat!") == "cat sat"
    assert token_f1("7 May 2023", "7 May 2023") == 1.0
    # prediction "on 7 may" vs reference "7 may 2023": common 2, p 2/3, r 2/3
    assert token_f1("on 7 May", "7 May 2023") == pytest.approx(2 / 3)
    assert token_f1("nothing", "7 May 2023") == 0.0
    assert token_f1("", "") == 1.0


def test_percentile_linear_interpolation():
    assert percentile([10, 20, 30, 40], 50) == 25
    assert percentile([10, 20, 30, 40], 95) == pytest.approx(38.5)
    assert percentile([], 50) == 0.0


def _r(i, cat, **kw):
    return QuestionResult(str(i), cat, kw.pop("unanswerable", False), **kw)


def test_summary_answers_abstention_grounding_tokens_and_categories():
    results = [
        _r(1, "x", retrieval={"hit@5": 1.0}, latency_ms=10, correct=True, abstained=False, grounded=True, tokens=100),
        _r(2, "x", retrieval={"hit@5": 0.0}, latency_ms=20, correct=False, abstained=False, grounded=False, tokens=200),
        _r(
            3,
            "y",
            unanswerable=True,
            retrieval={"hit@5": 1.0},
            latency_ms=30,
            correct=True,
            abstained=True,
            grounded=False,
            tokens=300,
        ),
        _r(4, "y", latency_ms=40, f1=0.5, abstained=True, grounded=False, tokens=400),  # wrongly abstained, no evidence
    ]
    s = summarize(results)
    assert s["hit@5"] == pytest.approx(2 / 3) and s["retrieval_questions"] == 3
    assert s["accuracy"] == pytest.approx(2 / 3)  # questions 1-3 have a correctness
    assert s["f1"] == 0.5
    assert s["abstention_precision"] == 0.5 and s["abstention_recall"] == 1.0
    assert s["grounded"] == 0.5  # of the two that answered, one cited evidence
    assert s["grounded_accuracy"] == 1.0  # the one correct reply was grounded
    assert s["tokens"] == 250
    assert s["latency_p50_ms"] == 25
    cats = by_category(results)
    assert cats["x"]["hit@5"] == 0.5 and cats["y"]["questions"] == 2


def test_summary_without_answers_has_no_answer_metrics():
    s = summarize([_r(1, "x", retrieval={"hit@1": 1.0, "hit@12": 1.0})])
    assert "accuracy" not in s and s["hit@1"] == 1.0
