"""Imprint's online compression on hand-made 2-d records. Every expected number below was worked out by
hand (with a calculator) from the paper's formulas, not by calling the code under test."""

import numpy as np
import pytest

from egodesk.core.settings import Settings
from egodesk.memory.consolidation import (
    CompressionParams,
    Entries,
    OnlineCompressor,
    Prototypes,
    contextual_embedding,
    importance,
)

X, Y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
HOUR = 3600.0


def test_parameters_default_to_the_papers_values():
    p = CompressionParams.from_settings(Settings())
    assert (p.history_k, p.alpha_h, p.delta_h, p.delta_g, p.max_prototypes) == (5, 0.5, 0.3, 0.75, 300)
    assert (p.decay_lambda, p.tau, p.delta_m, p.time_unit_s) == (1.14, 0.2, 0.75, 3600.0)


def test_importance_formula():
    # log(1+1) * e^0 / (1 + log(1+1)) = 0.693147 / 1.693147
    assert importance(1, 0.0, 1, 1.14) == pytest.approx(0.409384, abs=1e-6)
    # log 4 * e^(-1.14*0.5) / (1 + log 5) = 1.386294 * 0.565525 / 2.609438
    assert importance(3, 0.5, 4, 1.14) == pytest.approx(0.300442, abs=1e-6)
    # a first occurrence once the bank is full: log 2 / (1 + log 301) -> below tau = 0.2
    assert importance(1, 0.0, 300, 1.14) == pytest.approx(0.103345, abs=1e-6)
    # frequency grows it, recency and distinctiveness shrink it
    assert importance(5, 0, 10, 1.14) > importance(4, 0, 10, 1.14)
    assert importance(5, 1, 10, 1.14) < importance(5, 0, 10, 1.14)
    assert importance(5, 0, 20, 1.14) < importance(5, 0, 10, 1.14)


def test_context_embedding_uses_only_similar_history():
    # (0,1) has cos 0 and (0.3, 0.954) cos 0.3 with e: neither exceeds delta_h = 0.3; (0.6,0.8) does.
    # e~ = normalise(0.5 (1,0) + 0.5 (0.6,0.8)) = normalise(0.8, 0.4) = (0.894427, 0.447214)
    ctx, used = contextual_embedding(X, [Y, np.array([0.3, np.sqrt(0.91)]), np.array([0.6, 0.8])], 0.5, 0.3)
    assert used == 1
    assert ctx == pytest.approx([0.894427, 0.447214], abs=1e-6)
    # two contributing records: h = normalise(mean((0.6,0.8),(0.8,0.6))) = (0.707107, 0.707107);
    # e~ = normalise(0.853553, 0.353553) = (cos 22.5deg, sin 22.5deg) = (0.923880, 0.382683)
    ctx, used = contextual_embedding(X, [np.array([0.6, 0.8]), np.array([0.8, 0.6])], 0.5, 0.3)
    assert used == 2
    assert ctx == pytest.approx([0.923880, 0.382683], abs=1e-6)
    # no history, or none similar: e itself
    assert contextual_embedding(X, [], 0.5, 0.3)[0] == pytest.approx([1.0, 0.0])
    assert contextual_embedding(X, [Y], 0.5, 0.3)[1] == 0


def test_compressor_history_is_the_k_previous_records():
    params = CompressionParams(history_k=2)
    comp = OnlineCompressor(params, dim=2)
    for e in (Y, X, X):
        comp.step(e, 0.0)
    # history of d = (0.6,0.8) is [X, X] (Y fell out, k=2): h = (1,0), e~ = normalise(0.8,0.4)
    decision = comp.step(np.array([0.6, 0.8]), 0.0)
    assert decision.history_used == 2
    assert decision.context == pytest.approx([0.894427, 0.447214], abs=1e-6)


def test_a_compressor_before_its_first_record_saves_an_empty_history():
    """A footage whose first batches yield no record still saves its progress mark."""
    from egodesk.memory.record_tables import from_bytes, to_bytes

    saved = to_bytes(OnlineCompressor(CompressionParams(), dim=2).history_matrix())
    assert from_bytes(saved).size == 0


def test_prototype_assignment_threshold_and_cap():
    bank = Prototypes(dim=2)
    assert bank.assign(X, 10.0, 0.75, cap=2)[:2] == (0, True)
    # cos((0.8,0.6), (1,0)) = 0.8 >= 0.75: joins prototype 0, 5 s after its last occurrence
    proto, created, sim, elapsed = bank.assign(np.array([0.8, 0.6]), 15.0, 0.75, cap=2)
    assert (proto, created, elapsed) == (0, False, 5.0) and sim == pytest.approx(0.8)
    # cos((0,1), normalise(1.8,0.6)) = 0.316228 < 0.75 and room left: a new prototype
    proto, created, sim, elapsed = bank.assign(Y, 20.0, 0.75, cap=2)
    assert (proto, created, elapsed) == (1, True, 0.0) and sim == pytest.approx(0.316228, abs=1e-6)
    # at the cap (2) a dissimilar record joins its nearest prototype instead of creating one:
    # (-1,0) has cos -0.948683 with prototype 0 and 0 with prototype 1 -> prototype 1
    proto, created, sim, elapsed = bank.assign(np.array([-1.0, 0.0]), 50.0, 0.75, cap=2)
    assert (proto, created, elapsed) == (1, False, 30.0) and sim == pytest.approx(0.0, abs=1e-9)
    assert len(bank) == 2 and bank.counts == [2, 2] and bank.last_seen == [15.0, 50.0]


def test_consolidation_needs_both_similarities():
    entries = Entries(dim=2)
    entries.add(-1, X, Y)  # action-object (1,0), context (0,1)
    # action-object identical but context orthogonal: no merge
    assert entries.match(X, X, 0.75)[0] == -1
    # cos 0.8 on both: merge
    index, sim_e, sim_c = entries.match(np.array([0.8, 0.6]), np.array([0.6, 0.8]), 0.75)
    assert index == 0 and sim_e == pytest.approx(0.8) and sim_c == pytest.approx(0.8)


def test_stream_keeps_drops_and_consolidates_in_order():
    """Six records, context history off (k=0, so e~ = e) to isolate prototypes, importance and
    consolidation. Times in seconds; dT in hours."""
    comp = OnlineCompressor(CompressionParams(history_k=0), dim=2)
    stream = [(X, 0.0), (X, 1800.0), (Y, HOUR), (np.array([0.8, 0.6]), 3636.0), (np.array([0.6, 0.8]), 3700.0), (Y, 5 * HOUR)]
    d = [comp.step(e, t) for e, t in stream]
    # r1: new prototype, nu=1, N=1: log2/(1+log2)
    assert (d[0].prototype, d[0].prototype_created, d[0].nu, d[0].n_prototypes) == (0, True, 1, 1)
    assert d[0].importance == pytest.approx(0.409384, abs=1e-6) and d[0].kept and (d[0].entry, d[0].entry_created) == (0, True)
    # r2: same prototype half an hour later: log3 * e^(-0.57) / (1+log2)
    assert (d[1].prototype, d[1].nu, d[1].dt_units) == (0, 2, 0.5)
    assert d[1].importance == pytest.approx(0.366946, abs=1e-6) and (d[1].entry, d[1].entry_created) == (0, False)
    # r3: orthogonal -> prototype 1, N=2: log2/(1+log3); a new entry
    assert (d[2].prototype, d[2].prototype_created, d[2].n_prototypes) == (1, True, 2)
    assert d[2].importance == pytest.approx(0.330288, abs=1e-6) and (d[2].entry, d[2].entry_created) == (1, True)
    # r4: cos 0.8 to prototype 0, nu=3, dT = (3636-1800)/3600 = 0.51 h: log4 * e^(-0.5814) / (1+log3);
    # cos 0.8 to entry 0 on both embeddings -> merged there
    assert (d[3].prototype, d[3].nu) == (0, 3) and d[3].dt_units == pytest.approx(0.51)
    assert d[3].importance == pytest.approx(0.369338, abs=1e-6) and (d[3].entry, d[3].entry_created) == (0, False)
    # r5: cos 0.754305 to prototype 0 but 0.8 to prototype 1 -> prototype 1, dT = 100 s;
    # both entries qualify (0.754305 and 0.8 >= 0.75): the more similar, entry 1
    assert (d[4].prototype, d[4].nu) == (1, 2)
    assert d[4].importance == pytest.approx(0.507177, abs=1e-6)
    assert d[4].entry == 1 and d[4].entry_similarity[0] == pytest.approx(0.8)
    # r6: prototype 1 again after 3.972 h: log4 * e^(-4.528333) / (1+log3) = 0.007133 < tau -> dropped
    assert d[5].prototype == 1 and d[5].importance == pytest.approx(0.007133, abs=1e-6)
    assert not d[5].kept and d[5].entry == -1
    assert comp.prototypes.counts == [3, 3] and comp.prototypes.last_seen == [3636.0, 5 * HOUR]
    # members per entry, in arrival (time) order
    members = {}
    for (_, t), dec in zip(stream, d):
        if dec.kept:
            members.setdefault(dec.entry, []).append(t)
    assert members == {0: [0.0, 1800.0, 3636.0], 1: [HOUR, 3700.0]}
    assert comp.entries.counts == [3, 2]
