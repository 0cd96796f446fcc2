"""The one ask path (`pipeline.ask`): what the app, `egodesk ask` and `egodesk eval` all go through."""

from datetime import datetime, timedelta

import pytest

from egodesk.core.settings import Settings
from egodesk.core.timeutil import from_ts, to_ts
from egodesk.core.types import ABSTENTION, Answer, Evidence
from egodesk.eval.benchmark import BenchQuestion
from egodesk.eval.runner import run_questions
from egodesk.pipeline.ask import ask, check_question, describe, people_order, prepare, retrieve, unmentioned, with_when
from egodesk.pipeline.library import Library
from egodesk.reasoning.answerer import MAX_TOKENS
from egodesk.retrieval.base import Memory
from egodesk.retrieval.question import analyze
from egodesk.retrieval.timewindow import TimeWindow
from tests.doubles import ScriptedLLM
from tests.retrieval.conftest import DAY1, DAY2, built, ts  # noqa: F401  (a fixture)


@pytest.fixture
def memory(built, embedder):
    store, indices = built
    return Memory(store, indices, embedder, settings=Settings())


def test_ask_retrieves_then_answers_with_cited_evidence(memory):
    llm = ScriptedLLM(
        {"evidence": ["E1"], "reasoning": "The latest take paper before the question.", "answer": "From 09:00:50 to 09:00:55"}
    )
    answer = ask(
        memory,
        llm,
        "When was the last time I did this: take paper?",
        options=["From 09:00:00 to 09:00:05", "From 09:00:50 to 09:00:55"],
        asked_at=ts(DAY1, 100),
        k=4,
        sources=["kitchen"],
    )
    assert answer.option_index == 1 and answer.grounded and answer.cited
    assert all(ev.start < ts(DAY1, 100) for ev in answer.evidence)
    assert "retrieval_s" in answer.timings and answer.extra["strategy"] == "auto"
    assert all(ev.offset is not None for ev in answer.evidence)
    messages = llm.sent[0][0]
    assert "I take paper." in messages[1]["content"] and "Asked at: Wed 13 March 2024 09:01:40" in messages[1]["content"]


def test_ask_abstains_when_the_model_finds_nothing(memory):
    llm = ScriptedLLM({"evidence": [], "reasoning": "Nothing about a parrot.", "answer": "NOT_FOUND"})
    answer = ask(memory, llm, "What is the name of Melanie's parrot?", strategy="hybrid", k=3)
    assert answer.abstained and answer.text == ABSTENTION


def _bench(question: str) -> BenchQuestion:
    return BenchQuestion("q1", question, None, None, None, ts(DAY2), None)


EMPTY_CALLERS = {
    "the app (Library.ask)": lambda library, memory, llm, question: library.ask(question),
    "pipeline.ask": lambda library, memory, llm, question: ask(memory, llm, question),
    "retrieval alone": lambda library, memory, llm, question: retrieve(memory, question),
    "egodesk eval": lambda library, memory, llm, question: run_questions(memory, [_bench(question)], "auto", k=5, llm=llm),
}


@pytest.mark.parametrize("caller", list(EMPTY_CALLERS))
@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_an_empty_question_is_refused_once_for_every_caller(memory, tmp_path, caller, question):
    """Each caller gets the one refusal (`check_question`), before a model is loaded or asked."""
    library, llm = Library(tmp_path / "library"), ScriptedLLM()  # a model asked would fail: no replies
    with pytest.raises(ValueError, match="^the question is empty$"):
        EMPTY_CALLERS[caller](library, memory, llm, question)
    assert not llm.sent and not llm.read and "engines" not in vars(library)
    library.close()
    with pytest.raises(ValueError, match="^the question is empty$"):
        check_question(question)
    assert check_question(" What  did\tI take? ") == "What did I take?"


def test_the_cli_says_an_empty_question_is_empty(tmp_path, monkeypatch, capsys):
    from egodesk.cli import main as cli_main

    monkeypatch.setenv("EGODESK_HOME", str(tmp_path / "library"))
    assert cli_main(["ask", " \n "]) == 2
    assert capsys.readouterr().err == "error: the question is empty\n"


def test_every_strategy_searches_only_inside_the_window_the_question_names(memory):
    asked = ts(DAY2, 3 * 3600)
    for strategy in ("flat", "hybrid", "context", "timeaware", "auto", "carve"):
        found = retrieve(memory, "What did I take yesterday?", asked_at=asked, strategy=strategy, k=5)
        assert found.window is not None and found.window.label == "yesterday"
        assert found.evidence and all(found.window.start <= ev.start < found.window.end for ev in found.evidence), strategy


def test_a_window_without_footage_says_so_instead_of_answering_from_elsewhere(memory):
    llm = ScriptedLLM()  # never asked
    answer = ask(memory, llm, "What did I take at 3 pm?", asked_at=ts(DAY2, 8 * 3600))
    assert answer.abstained and not answer.evidence and not llm.sent
    assert answer.text.startswith(ABSTENTION) and "no footage from at 3 pm (Thu 14 Mar 2024, 14:30-15:30)" in answer.text
    assert answer.extra["window"]["label"] == "at 3 pm"


def test_a_year_before_the_first_footage_searches_what_was_said_later(memory):
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "Said in the kitchen.", "answer": "paper"})
    answer = ask(memory, llm, "What did I take last year?", asked_at=ts(DAY2, 3600), k=3)
    assert answer.evidence and llm.sent and "window" not in answer.extra
    assert answer.extra["recalled"]["label"] == "last year"


def test_nothing_found_that_mentions_the_question_is_not_answered(memory):
    llm = ScriptedLLM()  # never asked
    answer = ask(memory, llm, "Where did I park my car?", asked_at=ts(DAY2, 3600), k=3)
    assert answer.abstained and not llm.sent and answer.evidence  # the moments found are still shown
    assert answer.text == f"{ABSTENTION} Nothing found mentions 'park' or 'car'."


def test_a_question_whose_words_are_found_or_that_names_a_time_goes_to_the_model(memory):
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "The paper.", "answer": "paper"})
    assert not ask(memory, llm, "What did I do with the paper?", asked_at=ts(DAY2, 3600), k=3).abstained
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "The paper.", "answer": "paper"})
    assert not ask(memory, llm, "What did I hold yesterday?", asked_at=ts(DAY2, 3600), k=3).abstained
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "Nothing fried.", "answer": "NOT_FOUND"})
    ask(memory, llm, "What did I fry?", asked_at=ts(DAY2, 3600), k=3)
    assert llm.sent  # an action is asked in general words ("cook") the moments say in specific ones: the model decides
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "Nothing.", "answer": "NOT_FOUND"})
    ask(memory, llm, "Wo habe ich meine Schlüssel gelassen?", asked_at=ts(DAY2, 3600), k=3)
    assert llm.sent  # another language: its words are not the lines' words, the model decides


def test_the_library_days_resolve_day_numbers(memory):
    found = retrieve(memory, "What did I do on day 2?", asked_at=ts(DAY2, 3600), strategy="hybrid", k=20)
    days = {from_ts(ev.start).date() for ev in found.evidence}
    assert found.window is not None and days == {datetime(2024, 3, 13).date()}  # the chat (10 March) is day 1


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


def test_windows_are_described_as_people_read_them():
    day = ts(datetime(2024, 3, 13))
    assert describe(TimeWindow(day, day + 86400, "yesterday")) == "yesterday (Wed 13 Mar 2024)"
    assert describe(TimeWindow(day + 9 * 3600, day + 9.5 * 3600, "")) == "Wed 13 Mar 2024, 09:00-09:30"


def test_eval_measures_the_path_the_app_ships(memory, tmp_path):
    """`egodesk eval` answers a question as the app (`Library.ask`) does: the same moments found, the
    same prompt sent to the model, the same answer taken from the same reply."""
    question = _bench("When did I last take milk?")
    reply = {"evidence": ["E1"], "reasoning": "Milk was taken.", "answer": "At 09:01:20"}
    library, app_llm, eval_llm = Library(tmp_path / "library"), ScriptedLLM(reply), ScriptedLLM(reply)
    library.__dict__["memory"] = memory  # the app's retrieval over this library, its models not loaded
    library.engines.__dict__["llm"] = app_llm
    app = library.ask(question.question, asked_at=question.asked_at, strategy="auto", k=5)
    [result] = run_questions(memory, [question], "auto", k=5, llm=eval_llm)
    library.close()
    assert app_llm.sent and eval_llm.sent == app_llm.sent  # the prompt and its schema, to the character
    assert {r["unit"] for r in result.detail["retrieved"]} == {ev.unit_id for ev in app.evidence}
    assert (result.detail["answer"], result.detail["cited"]) == (app.text, app.cited) and app.text.startswith("At 09:01:20")
    assert (result.grounded, result.abstained) == (app.grounded, app.abstained) == (True, False)


def test_a_question_read_ahead_while_typed_is_the_prompt_asking_it_sends_up_to_its_asked_time(memory):
    question = "When was the last time I did this: take paper?"
    reply = {"evidence": ["E1"], "reasoning": "The latest take paper.", "answer": "at 09:00:50"}
    llm = ScriptedLLM(reply, reply)
    typed_at = prepare(memory, llm, question, k=4)
    ask(memory, llm, question, k=4)
    ask(memory, llm, question, k=4, asked_at=typed_at)
    ((read, read_schema, reply_tokens),), ((sent, schema), (sent_as_typed, _)) = llm.read, llm.sent
    assert read_schema == schema and reply_tokens == MAX_TOKENS  # its reply is written ahead as the ask's is
    assert read[0] == sent[0] and "take paper" in read[1]["content"]
    head = read[1]["content"].split("Asked at:")[0]
    assert head.endswith("</evidence>\n") and sent[1]["content"].startswith(head)  # only the time asked may differ
    assert sent_as_typed == read  # asked at the time it was typed: the very prompt read

    quiet = ScriptedLLM()
    # The model will not be asked (no footage then; nothing found mentions it), but the time asked counts.
    assert prepare(memory, quiet, "What did I take at 3 pm?", asked_at=ts(DAY2)) == ts(DAY2)
    assert prepare(memory, quiet, "Where is my parrot?") is not None
    assert prepare(memory, quiet, question, should_stop=lambda: True) is None  # asked meanwhile
    assert prepare(memory, quiet, "   ") is None  # nothing typed yet
    assert not quiet.read


def test_the_moments_found_come_before_the_answer_which_streams(memory):
    events = []
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "Paper was taken.", "answer": "I took the paper"})
    answer = ask(
        memory,
        llm,
        "What did I do with the paper?",
        asked_at=ts(DAY1, 100),
        k=4,
        on_evidence=lambda found: events.append(("evidence", [(ev.rank, ev.offset) for ev in found])),
        on_text=lambda piece: events.append(("text", piece)),
    )
    kind, found = events[0]
    assert kind == "evidence" and [rank for rank, _ in found] == list(range(1, len(found) + 1))
    assert all(offset is not None for _, offset in found)  # a chip can seek before the answer exists
    pieces = [piece for kind, piece in events[1:] if kind == "text"]
    assert len(pieces) > 1 and "".join(pieces) == answer.text == "I took the paper"


def test_the_cli_prints_the_answer_as_it_is_written(tmp_path, monkeypatch, capsys):
    import egodesk.commands.ask as ask_command
    import egodesk.perception.llm as llm_module
    from egodesk.cli import main as cli_main
    from egodesk.pipeline.library import Library

    day = tmp_path / "day.jsonl"
    day.write_text(
        '{"source": "day", "start": "2024-03-13T09:00:00", "end": "2024-03-13T09:00:20", "kind": "narration", '
        '"text": "I put the keys in the blue bowl by the door."}\n',
        encoding="utf-8",
    )
    library = Library(tmp_path / "lib")
    assert library.add([day]).added and library.process()["failed"] == 0
    library.close()
    monkeypatch.setenv("EGODESK_HOME", str(tmp_path / "lib"))
    replies = [
        {"evidence": ["E1"], "reasoning": "The bowl.", "answer": "In the blue bowl by the door"},
        {"evidence": [], "reasoning": "A guess.", "answer": "On the table"},
    ]
    monkeypatch.setattr(llm_module, "make_llm", lambda *args, **kwargs: ScriptedLLM(replies.pop(0)))
    printed = []
    monkeypatch.setattr(
        ask_command, "print", lambda *args, **kwargs: (printed.append(args), print(*args, **kwargs)), raising=False
    )

    assert cli_main(["ask", "Where are my keys?", "--at", "2024-03-13T10:00:00"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "In the blue bowl by the door" and len(printed) > 3  # piece by piece, then the rest

    assert cli_main(["ask", "What colour is the door?", "--at", "2024-03-13T10:00:00"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "On the table" and lines[1].startswith("(withdrawn: ") and lines[2] == ABSTENTION


def test_a_question_asked_as_it_was_read_ahead_is_asked_at_the_time_it_was_typed(tmp_path, monkeypatch):
    """The library asks a question read ahead unchanged (a pause in typing, then Enter) at the time its
    read prompt says, so that prompt is the one sent; an edited, late or explicitly timed one is not."""
    import egodesk.pipeline.ask as ask_path
    from egodesk.pipeline import library as library_module

    library = library_module.Library(tmp_path / "lib")
    library.__dict__.update(memory=None, engines=type("Engines", (), {"llm": None, "embedder_stale": lambda self: False})())
    asked: list[float | None] = []
    monkeypatch.setattr(ask_path, "prepare", lambda *args, **kwargs: 1000.0)
    monkeypatch.setattr(ask_path, "ask", lambda *args, asked_at=None, **kwargs: asked.append(asked_at))
    library.prepare_to_answer("Where are  my keys?")
    library.ask("Where are my keys? ")
    library.ask("Where are my glasses?")
    library.ask("Where are my keys?", asked_at=2000.0)
    library.ask("Where are my keys?", options=["bowl", "shelf"])
    monkeypatch.setattr(library_module.time, "monotonic", lambda: 1e12)
    library.ask("Where are my keys?")
    assert asked[0] == 1000.0 and asked[2] == 2000.0
    assert all(abs(at - to_ts(datetime.now())) < 60 for at in (asked[1], asked[3], asked[4]))  # now
    library.close()


def test_a_question_asked_again_a_moment_later_is_asked_at_the_time_it_was_first_asked(tmp_path, monkeypatch):
    """Asked again within ASKED_AT_KEPT_S of its first asking (or read again while retyped), a question is
    asked at its first time, so its prompt is the one already answered and gets that answer; the time kept
    is never older than ASKED_AT_KEPT_S, however often the question is asked."""
    import egodesk.pipeline.ask as ask_path
    from egodesk.pipeline import library as library_module

    library = library_module.Library(tmp_path / "lib")
    library.__dict__.update(memory=None, engines=type("Engines", (), {"llm": None, "embedder_stale": lambda self: False})())
    asked: list[float] = []
    read: list[float | None] = []
    monkeypatch.setattr(ask_path, "ask", lambda *args, asked_at=None, **kwargs: asked.append(asked_at))
    monkeypatch.setattr(ask_path, "prepare", lambda *args, asked_at=None, **kwargs: read.append(asked_at) or asked_at)
    clock = [100.0]
    monkeypatch.setattr(library_module.time, "monotonic", lambda: clock[0])
    library.ask("Where are my glasses?")
    clock[0] += 70
    library.prepare_to_answer("Where are")  # retyped: read as typed so far
    library.ask("Where are my  glasses? ")
    library.prepare_to_answer("Where are my glasses?")
    clock[0] += 60  # 130 s after the first asking
    library.ask("Where are my glasses?")
    library.ask("Where are my glasses?", options=["desk", "bag"])
    assert asked[0] == asked[1] == read[1] and read[0] is None  # "Where are" was read as typed now
    assert asked[2] > asked[0] and asked[3] > asked[2]
    library.close()


def _heard(*texts: str) -> list[Evidence]:
    return [Evidence(n, 1, "20261130_074000", 0.0, 1.0, text, 1.0, rank=n) for n, text in enumerate(texts, start=1)]


@pytest.mark.parametrize(
    ("question", "found"),
    [
        ("Whose motorcycle did I borrow?", "I hear: Tom and me is Mogor Cycle for the weekend."),  # split, misheard
        ("When is the vet appointment?", "I hear: Remember, the meta pointment is on Thursday at 4."),
        ("What was the printed page I read before bed about?", "I hear: Reading the old printed page before mad."),
        ("What did I plan to buy for Granny?", "I hear: Do not forget glad in birthday. I will buy some tulips."),  # half
    ],
)
def test_a_thing_heard_otherwise_or_a_question_found_nearly_whole_goes_to_the_model(question, found):
    """The question is asked in the words said; the transcript has what the recogniser heard."""
    assert unmentioned(analyze(question), _heard("I see a kitchen.", found)) == []


@pytest.mark.parametrize(
    ("question", "missing"),
    [
        ("Where did I leave my bicycle?", ["bicycle"]),  # the motorcycle is not it
        ("What was the name of the horse I saw?", ["name", "horse"]),
        ("What did the dentist say about my teeth?", ["dentist", "teeth"]),
    ],
)
def test_what_is_truly_absent_is_still_refused_without_the_model(question, missing):
    found = _heard("I hear: Tom's motorcycle is parked outside the bakery.", "I see a house with a red door.")
    assert unmentioned(analyze(question), found) == missing


def test_a_stated_time_answer_is_what_was_said_not_the_moments_time(memory):
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "Melanie said when.", "answer": "At 4 pm"})
    answer = ask(memory, llm, "When is the charity race?", asked_at=ts(DAY2, 3600), k=3, strategy="hybrid")
    assert answer.text == "At 4 pm"  # not "At 4 pm, on <the chat's day> at <its time>"
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "I took the paper then.", "answer": "When I took the paper"})
    answer = ask(memory, llm, "When did I take the paper?", asked_at=ts(DAY2, 3600), k=3, strategy="hybrid")
    assert answer.text.startswith("When I took the paper, on ")  # a moment's when keeps its day and time


def test_a_thing_the_tagger_named_by_its_kind_goes_to_the_model():
    found = _heard("I see a moped, motor scooter.", "I hear: Ride carefully.")
    assert unmentioned(analyze("When did I see a motorbike?"), found) == []
    assert unmentioned(analyze("When did I see a bicycle?"), found) == ["bicycle"]
