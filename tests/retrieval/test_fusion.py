"""`retrieval.fusion`: reciprocal rank fusion (score = sum of w / (k0 + rank), ranks from 1, ties by
row), children mapped to their parents at their best child's place, and ranks from 1."""

from __future__ import annotations

import numpy as np
import pytest

from egodesk.retrieval.catalog import Catalog
from egodesk.retrieval.fusion import RRF_K0, rank_map, rrf, to_parents


def test_k0_is_the_papers_60():
    assert RRF_K0 == 60


def test_a_row_ranked_by_both_lists_beats_a_row_ranked_first_by_one():
    dense = [(1, 0.9), (2, 0.8), (3, 0.1)]
    lexical = [(4, 12.0), (2, 7.0)]
    fused = rrf([dense, lexical])
    assert [row for row, _ in fused] == [2, 1, 4, 3]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 62)
    assert dict(fused)[3] == pytest.approx(1 / 63)


def test_only_ranks_count_not_the_lists_own_scores():
    assert rrf([[(7, 1000.0), (8, 0.001)]]) == rrf([[(7, 0.5), (8, 0.4)]])


def test_ties_go_to_the_lower_row_and_k0_sets_how_much_rank_matters():
    assert rrf([[(5, 1.0)], [(3, 1.0)]]) == [(3, 1 / 61), (5, 1 / 61)]
    assert rrf([[(1, 1.0), (2, 0.5)]], k0=0) == [(1, 1.0), (2, 0.5)]


def test_weights_scale_each_list():
    fused = dict(rrf([[(1, 1.0)], [(2, 1.0)]], weights=[1.0, 3.0]))
    assert fused[2] == pytest.approx(3 * fused[1])
    assert rrf([]) == [] and rrf([[], []]) == []


def catalog(parents: dict[int, int]) -> Catalog:
    """Units 10, 20, ... (row i holds unit 10 * (i + 1)), with these unit -> parent unit links."""
    ids = np.arange(10, 10 * (max(parents) // 10 + 1), 10, dtype=np.int64)
    n = len(ids)
    return Catalog(
        ids=ids,
        footage=np.ones(n, dtype=np.int64),
        clip=np.full(n, -1, dtype=np.int64),
        parent=np.array([parents.get(int(i), -1) for i in ids], dtype=np.int64),
        start=np.zeros(n),
        end=np.zeros(n),
        kind=np.array(["subchunk"] * n, dtype=object),
        view=np.array([""] * n, dtype=object),
        text=[""] * n,
        meta=[None] * n,
        titles={1: "kitchen"},
        stamp=(n, int(ids[-1])),
    )


# rows: 0 = unit 10 (a parent), 1 = unit 20 (a parent), 2..4 = children of 10, 20, 10; row 5 = unit 60, whose
# parent (unit 99) is not loaded; row 6 = unit 70, without a parent
PARENTS = {30: 10, 40: 20, 50: 10, 60: 99, 70: -1}


def test_children_become_their_parents_at_their_best_childs_place():
    ranked = [(4, 0.9), (3, 0.8), (2, 0.7), (6, 0.5)]
    assert to_parents(catalog(PARENTS), ranked, k=5) == [(0, 0.9, [4, 2]), (1, 0.8, [3]), (6, 0.5, [6])]


def test_at_most_k_parents_but_every_child_of_a_kept_one():
    ranked = [(2, 0.9), (3, 0.8), (6, 0.5), (4, 0.4)]
    assert to_parents(catalog(PARENTS), ranked, k=1) == [(0, 0.9, [2, 4])]
    assert to_parents(catalog(PARENTS), ranked, k=0) == []


def test_a_unit_whose_parent_is_not_loaded_stands_for_itself():
    assert to_parents(catalog(PARENTS), [(5, 0.3)], k=3) == [(5, 0.3, [5])]


def test_ranks_count_from_one():
    assert rank_map([(9, 0.1), (4, 0.05)]) == {9: 1, 4: 2}
    assert rank_map([]) == {}
