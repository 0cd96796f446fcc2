from datetime import datetime

import pytest

from egodesk.reasoning.relative_dates import annotate

MONDAY = datetime(2023, 5, 8, 13, 56)  # Mon 8 May 2023, as a LoCoMo session is dated


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I went to the support group yesterday.", "I went to the support group yesterday [7 May 2023]."),
        ("Last night was fun", "Last night [7 May 2023] was fun"),
        ("the day before yesterday", "the day before yesterday [6 May 2023]"),
        ("see you tomorrow", "see you tomorrow [9 May 2023]"),
        ("Last Sunday I ran a race", "Last Sunday [7 May 2023] I ran a race"),
        ("last Monday", "last Monday [1 May 2023]"),  # the same weekday: a week back, not today
        ("this past Friday", "this past Friday [5 May 2023]"),
        ("next Monday", "next Monday [15 May 2023]"),
        ("we met last week", "we met last week [the week before 8 May 2023]"),
        ("last weekend we camped", "last weekend [6-7 May 2023] we camped"),
        ("See you next month!", "See you next month [June 2023]!"),
        ("I painted it last year", "I painted it last year [2022]"),
        ("my 18th birthday was 10 years ago", "my 18th birthday was 10 years ago [2013]"),
        ("two days ago I signed up", "two days ago [6 May 2023] I signed up"),
        ("three weeks ago", "three weeks ago [about 17 April 2023]"),
        ("a couple of months ago", "a couple of months ago [March 2023]"),
    ],
)
def test_a_relative_date_is_followed_by_the_date_it_means(text, expected):
    assert annotate(text, MONDAY) == expected


@pytest.mark.parametrize(
    "text",
    [
        "a few days ago",
        "this week",
        "recently",
        "the other day",
        "I take the next plate",
        "Yesterdays are gone",
        "next to the sink",
    ],
)
def test_vague_or_unrelated_words_are_left_alone(text):
    assert annotate(text, MONDAY) == text


def test_across_a_year_end():
    assert annotate("last month", datetime(2024, 1, 3)) == "last month [December 2023]"
    assert annotate("next weekend", datetime(2023, 12, 27)) == "next weekend [30-31 December 2023]"
    assert annotate("last weekend", datetime(2024, 1, 2)) == "last weekend [30-31 December 2023]"
    assert annotate("next weekend", datetime(2024, 1, 30)) == "next weekend [3-4 February 2024]"
