"""The everyday words for the tagger's fine labels: a question's kind meets the label a frame was given."""

from __future__ import annotations

import json
import re

from egodesk.core.manifest import locate
from egodesk.perception.label_kinds import GROUPS, same_kind


def test_a_kind_meets_the_labels_of_its_kind_both_ways():
    assert {"moped", "motor scooter"} <= same_kind("motorbike")
    assert "motorbike" in same_kind("scooter")
    assert "egyptian mau" in same_kind("cat")
    assert "terrier" in same_kind("dog")
    assert same_kind("Motorbike") == same_kind("moped")


def test_other_kinds_do_not_match():
    assert "moped" not in same_kind("bicycle")
    assert same_kind("horse") == frozenset()  # no group: the exact word is matched elsewhere


def test_every_kind_names_labels_the_tagger_uses():
    labels = "\n".join(json.loads((locate("tagger") / "labels.json").read_text(encoding="utf-8"))).lower()
    for group in GROUPS:  # each kind's general word, or another of its words, is in a label
        assert any(re.search(rf"\b{re.escape(word)}s?\b", labels) for word in group), group[0]
