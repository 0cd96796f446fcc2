"""Words heard alike: what a recogniser wrote for a word still meets the word, and unrelated words do not."""

from __future__ import annotations

import pytest

from egodesk.core.soundalike import alike, edit_distance, find_alike, sound_key


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


def test_the_first_word_heard_alike_is_found():
    assert find_alike("Appointment", ["the", "meta", "pointment"]) == "pointment"
    assert find_alike("helmet", ["tom", "lent", "me"]) is None


def test_edit_distance():
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3
