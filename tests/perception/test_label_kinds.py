"""The everyday words for the tagger's fine labels: a question's kind meets the label a frame was given."""

from __future__ import annotations

import json

from egodesk.core.manifest import locate
from egodesk.perception.label_kinds import GROUPS, names_kind, same_kind


def test_a_kind_meets_the_labels_of_its_kind_both_ways():
    assert names_kind("motorbike", "i see a moped, motor scooter.") == "moped"
    assert names_kind("scooter", "i hear: tom's motorbike is outside.") == "motorbike"
    assert names_kind("cat", "i see an egyptian mau.") == "egyptian mau"
    assert names_kind("dog", "i see a yorkshire terrier.") == "terrier"


def test_other_kinds_and_parts_of_words_do_not_match():
    assert names_kind("bicycle", "i see a moped.") is None
    assert names_kind("cat", "i see a catamaran.") is None  # whole words only
    assert names_kind("horse", "i see a horse.") is None  # no group: the exact word is matched elsewhere
    assert same_kind("Motorbike") == same_kind("moped")


def test_every_kind_names_labels_the_tagger_uses():
    labels = "\n".join(json.loads((locate("tagger") / "labels.json").read_text(encoding="utf-8"))).lower()
    for group in GROUPS:  # each kind's general word, or another of its words, is in a label
        assert names_kind(group[0], labels) or f"\n{group[0]}\n" in labels, group[0]
