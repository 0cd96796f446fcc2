"""Recognised words joined into a line (`core.words.spoken_text`)."""

import pytest

from egodesk.core.words import spoken_text


@pytest.mark.parametrize(
    ("words", "line"),
    [
        (["The", "budget", "is", "12", ",000", "euros."], "The budget is 12,000 euros."),
        (["at", "9", "o", "'clock."], "at 9 o'clock."),
        (["a", "non", "-stop", "flight"], "a non-stop flight"),
        (["a", "flat", "white", "is", "3", ".40"], "a flat white is 3.40"),
        (["50", "%", "off"], "50% off"),
        (["this", "-", "and", "that"], "this - and that"),  # a dash on its own is a word apart
        ([" Hello", " world. "], "Hello world."),
    ],
)
def test_a_piece_that_continues_a_word_joins_it_without_a_space(words, line):
    assert spoken_text(words) == line
