"""The diarization error rate and identity accuracy on hand-made cases whose answers are worked out here."""

from __future__ import annotations

import pytest

from egodesk.eval.diarization import der, der_parts, identity_accuracy, total_der


def test_a_perfect_hypothesis_under_other_names_has_no_error():
    reference = [("A", 0.0, 10.0), ("B", 10.0, 20.0)]
    assert der(reference, [("x", 0.0, 10.0), ("y", 10.0, 20.0)]) == pytest.approx(0.0)


def test_a_late_speaker_change_is_confusion_outside_the_collar():
    reference = [("A", 0.0, 10.0), ("B", 10.0, 20.0)]
    hypothesis = [("x", 0.0, 12.0), ("y", 12.0, 20.0)]
    # Without a collar: B's first 2 s are given to A's voice, over 20 s of speech.
    assert der(reference, hypothesis, collar=0.0) == pytest.approx(2 / 20)
    # With 0.25 s: [0, 0.25], [9.75, 10.25] and [19.75, 20] are not scored (19 s left) and 1.75 s is wrong.
    parts = der_parts(reference, hypothesis)
    assert parts.scored == pytest.approx(19.0)
    assert parts.confusion == pytest.approx(1.75)
    assert parts.der == pytest.approx(1.75 / 19)


def test_missed_speech_false_alarm_and_overlap():
    reference = [("A", 0.0, 10.0), ("B", 5.0, 10.0)]  # B talks over A's second half
    hypothesis = [("x", 0.0, 3.0), ("x", 4.0, 10.0), ("x", 12.0, 13.0)]
    parts = der_parts(reference, hypothesis, collar=0.0)
    assert parts.scored == pytest.approx(15.0)
    assert parts.missed == pytest.approx(1.0 + 5.0)  # A's gap at 3-4, and B wholly (one voice heard)
    assert parts.false_alarm == pytest.approx(1.0)  # 12-13, nobody spoke
    assert parts.confusion == pytest.approx(0.0)
    assert parts.der == pytest.approx(7 / 15)


def test_the_mapping_is_one_to_one():
    # One hypothesis voice covers both people: only one of them can be mapped to it.
    parts = der_parts([("A", 0.0, 4.0), ("B", 4.0, 10.0)], [("x", 0.0, 10.0)], collar=0.0)
    assert parts.confusion == pytest.approx(4.0)  # x is mapped to B (6 s shared), A's 4 s are confused


def test_total_der_maps_each_recording_on_its_own_and_sums_seconds():
    first = ([("A", 0.0, 10.0)], [("x", 0.0, 10.0)])
    second = ([("A", 0.0, 10.0)], [("y", 0.0, 5.0), ("x", 5.0, 10.0)])  # two voices for one person
    parts = total_der([first, second], collar=0.0)
    assert parts.scored == pytest.approx(20.0)
    assert parts.confusion == pytest.approx(5.0)


def test_identity_accuracy_needs_the_same_voice_id_across_recordings():
    references = {"r1": [("me", 0.0, 10.0), ("Tom", 10.0, 14.0)], "r2": [("me", 0.0, 6.0)]}
    # v1 is "me" in r1 and r2; Tom gets v2. Every second is right.
    assert identity_accuracy(references, {"r1": [("v1", 0.0, 10.0), ("v2", 10.0, 14.0)], "r2": [("v1", 0.0, 6.0)]}, 0.0)[
        0
    ] == pytest.approx(1.0)
    # r2's wearer was given a new voice v3: one mapping for the library cannot take both v1 and v3 to "me".
    score, mapping = identity_accuracy(references, {"r1": [("v1", 0.0, 10.0), ("v2", 10.0, 14.0)], "r2": [("v3", 0.0, 6.0)]}, 0.0)
    assert score == pytest.approx(14 / 20)
    assert mapping == {"v1": "me", "v2": "Tom"}
