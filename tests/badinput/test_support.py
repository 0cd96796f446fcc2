"""The odd-question check itself (`support.grounded_or_abstained`) refuses what it must: it is the
only judge of a tiny model's answers in test_badinput_questions."""

import pytest

from egodesk.core.types import ABSTENTION, Answer, Evidence
from tests.badinput.support import grounded_or_abstained

pytestmark = pytest.mark.badinput

SHOWN = [Evidence(7, 1, "day", 10.0, 15.0, "Ana: I left my keys.", 1.0), Evidence(9, 1, "day", 20.0, 25.0, "Ben: umbrella", 0.5)]
UNSHOWN = Evidence(11, 1, "day", 30.0, 31.0, "not in the prompt", 0.1)
PROMPT = [
    {"role": "system", "content": "rules"},
    {"role": "user", "content": "<evidence>day\nE1 09:00 Ana: I left my keys.\nE2 09:10 Ben: umbrella</evidence>\nQuestion: q"},
]
OPTIONS = ["at work", "in the closet"]


def test_an_answer_citing_a_line_it_was_shown_or_the_abstention_passes():
    assert grounded_or_abstained(Answer("q", "On the table", SHOWN, cited=[7]), PROMPT)
    assert grounded_or_abstained(Answer("q", "in the closet", SHOWN, cited=[9], option_index=1), PROMPT, OPTIONS)
    assert grounded_or_abstained(Answer("q", ABSTENTION, SHOWN, abstained=True, grounded=False), PROMPT)


@pytest.mark.parametrize(
    "answer, options",
    [
        (Answer("q", "On the table", SHOWN, cited=[8]), None),  # cites a moment it was not given
        (Answer("q", "z", [*SHOWN, UNSHOWN], cited=[11]), None),  # given, but its line is not in the prompt
        (Answer("q", "On the table", SHOWN), None),  # cites nothing
        (Answer("q", "E2", SHOWN, cited=[9]), None),  # an evidence id for an answer
        (Answer("q", "A.", SHOWN, cited=[9]), None),  # the injected answer
        (Answer("q", "closet", SHOWN, cited=[9], option_index=1), OPTIONS),  # a pick that is not its option
        (Answer("q", "at work", SHOWN, cited=[9]), OPTIONS),  # no option picked
        (Answer("q", ABSTENTION, SHOWN, abstained=True, grounded=True), None),  # abstains yet claims grounding
        (Answer("q", "I could not find it", SHOWN, abstained=True, grounded=False), None),  # not the abstention
    ],
    ids=["unknown", "unshown", "uncited", "id", "injected", "not-option", "no-pick", "grounded-abstention", "other-text"],
)
def test_anything_else_fails(answer, options):
    assert not grounded_or_abstained(answer, PROMPT, options)
