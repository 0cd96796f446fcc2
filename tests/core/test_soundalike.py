"""Words heard alike: what a recogniser wrote for a word still meets the word, and unrelated words do not."""

from __future__ import annotations

import pytest

from egodesk.core.soundalike import alike, edit_distance, find_alike, heard_forms, sound_key


@pytest.mark.parametrize(
    ("word", "key"),
    [("motorcycle", "MTRSKL"), ("phone", "FN"), ("fone", "FN"), ("knight", "NT"), ("thursday", "0RST"), ("anika", "ANK")],
)
def test_sound_key(word, key):
    assert sound_key(word) == key


@pytest.mark.parametrize(
    ("said", "heard"),
    [
        ("appointment", "pointment"),  # the start swallowed
        ("anika", "annika"),  # spelled another way
        ("declan", "decklan"),
        ("motorcycle", "mogorcycle"),  # "Mogor Cycle", joined
        ("prescription", "perscription"),
        ("risotto", "rizotto"),
    ],
)
def test_misheard_forms_are_alike(said, heard):
    assert alike(said, heard)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("bed", "mad"),
        ("bicycle", "motorcycle"),
        ("shelf", "self"),
        ("dentist", "tennis"),
        ("horse", "house"),
        ("car", "card"),
        ("park", "brake"),  # both PRK: three sounds are too few to tell words apart
    ],
)
def test_different_words_are_not_alike(one, other):
    assert not alike(one, other)


def test_neighbouring_words_are_also_heard_joined():
    heard = heard_forms("tom and me is mogor cycle for the weekend".split())
    assert find_alike("motorcycle", heard) == "mogorcycle"
    assert find_alike("helmet", heard) is None


def test_edit_distance():
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3
