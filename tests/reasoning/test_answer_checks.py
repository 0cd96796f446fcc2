"""The checks and mending around the model's answer (`reasoning.answer_checks`): a "when" answer's
day and time, the evidence in the order people meet it."""

from datetime import timedelta

from egodesk.core.types import Answer, Evidence
from egodesk.reasoning.answer_checks import people_order, with_when
from tests.retrieval.conftest import DAY1, ts


def _ev(uid: int, rank: int, start: float = 0.0, pinpointed: bool = False) -> Evidence:
    return Evidence(uid, 1, "s", start, start + 1, f"unit {uid}", 1.0 / rank, rank=rank, pinpointed=pinpointed)


def test_evidence_leads_with_the_cited_moments_then_by_relevance():
    retrieved = [_ev(1, 1, 50), _ev(2, 2, 10), _ev(3, 3, 30), _ev(4, 4, 20, pinpointed=True), _ev(5, 5, 40)]
    shown = sorted(retrieved[:4], key=lambda e: e.start)  # the answerer reads its lines in time order
    answer = Answer("q", "a", shown, cited=[3, 2])
    assert [ev.unit_id for ev in people_order(answer, retrieved)] == [3, 2, 4, 1, 5]


def test_a_when_question_is_answered_with_the_moments_day_and_time():
    moment = ts(DAY1, 3725)
    answer = Answer("When did I see the cat?", "When I was in the garden", [_ev(7, 1, moment)], cited=[7])
    assert with_when(answer) == "When I was in the garden, on Wed 13 March 2024 at 10:02"
    answer.text = "On 13 March at 10:02"
    assert with_when(answer) == "On 13 March at 10:02"
    answer.text = "At 20240313_100205"  # a file name copied from the evidence names no time
    assert with_when(answer) == "At 20240313_100205, on Wed 13 March 2024 at 10:02"


def test_a_when_answer_with_a_cited_moments_time_but_another_day_gets_the_moments_day():
    moment = ts(DAY1, 3725)  # Wed 13 March 2024, 10:02:05
    answer = Answer("When did I see the cat?", "10:02:05 on Thursday, 14 March 2024", [_ev(7, 1, moment)], cited=[7])
    assert with_when(answer) == "On Wed 13 March 2024 at 10:02"
    answer.text = "At 10:02 on Wednesday, 13 March"  # the moment's own day stays as written
    assert with_when(answer) == "At 10:02 on Wednesday, 13 March"
    answer.evidence[0].text = "Let us meet again on Monday at 10:00."
    answer.text = "On Monday at 10:00"  # a time said in the evidence, not the moment's: left alone
    assert with_when(answer) == "On Monday at 10:00"
    answer.text = "I sat in the sun at 10:02."  # no day named: which of the library's days?
    assert with_when(answer) == "I sat in the sun at 10:02, on Wed 13 March 2024"


def test_a_when_answer_gives_the_time_of_the_cited_moment_that_holds_what_was_asked_about():
    street, cat = ts(DAY1, 3725), ts(DAY1 - timedelta(days=1), 7200)  # Wed 10:02:05, Tue 11:00:00
    shown = [_ev(7, 1, street), _ev(8, 2, cat)]
    shown[0].text, shown[1].text = "I see a moped on the street.", "I see what looks like a tabby cat (low confidence)."
    answer = Answer("When did I see a cat?", "Wed 13 March 2024 10:02:05", shown, cited=[7, 8])
    assert with_when(answer, ["cat"]) == "On Tue 12 March 2024 at 11:00"
    answer.text = "On Tuesday at 11:00"  # the cat's own moment: left alone
    assert with_when(answer, ["cat"]) == "On Tuesday at 11:00"
    answer.text = "Wed 13 March 2024 10:02:05"
    assert with_when(answer, ["dog"]) == answer.text  # no cited moment holds it: the model's pick stands
    assert with_when(answer, []) == answer.text
    answer.text = "When I was outside"  # no time given: the moment holding it
    assert with_when(answer, ["cat"]) == "When I was outside, on Tue 12 March 2024 at 11:00"


def test_a_when_answer_with_a_time_nothing_shown_holds_gets_the_cited_moments_day_and_time():
    moment = ts(DAY1, 3725)  # Wed 13 March 2024, 10:02:05
    answer = Answer("When did I last talk to Tom?", "21:00:00", [_ev(7, 1, moment)], cited=[7])
    assert with_when(answer, ["tom"]) == "On Wed 13 March 2024 at 10:02"  # the time it was asked, copied
    noted = [ts(DAY1, 7200)]  # "Tom's voice was heard ...: Wed 13 March 2024 11:00"
    answer.text = "Wed 13 March 2024 11:00"
    assert with_when(answer, ["tom"], noted) == answer.text  # read from the note: left alone
    assert with_when(answer, ["tom"]) == "On Wed 13 March 2024 at 10:02"
    answer.evidence[0].text = "Let us meet again on Monday at 11."
    assert with_when(answer, ["tom"]) == answer.text  # said in a line as a bare hour: left alone
