"""The one ask path (`pipeline.ask`): what the app, `egodesk ask` and `egodesk eval` all go through."""

from datetime import datetime

import pytest

from egodesk.core.settings import Settings
from egodesk.core.timeutil import from_ts, to_ts
from egodesk.core.types import ABSTENTION, Answer
from egodesk.eval.benchmark import BenchQuestion
from egodesk.eval.runner import run_questions
from egodesk.pipeline.ask import ASKED_AT_KEPT_S, Asker, AskRequest, check_question, describe, retrieve
from egodesk.pipeline.library import Library
from egodesk.reasoning.answerer import MAX_TOKENS
from egodesk.retrieval.base import Memory
from egodesk.retrieval.timewindow import TimeWindow
from tests.doubles import ScriptedLLM
from tests.retrieval.conftest import DAY1, DAY2, built, ts  # noqa: F401  (a fixture)


@pytest.fixture
def memory(built, embedder):
    store, indices = built
    return Memory(store, indices, embedder, settings=Settings())


def ask(memory: Memory, llm, question: str, **given) -> Answer:
    """A question asked once, as the library asks it (a fresh Asker: no time kept for it)."""
    return Asker.over(memory, llm).ask(question, **given)


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
    "retrieval alone": lambda library, memory, llm, question: retrieve(memory, AskRequest.make(question, memory.settings)),
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
        found = retrieve(
            memory, AskRequest.make("What did I take yesterday?", memory.settings, asked_at=asked, strategy=strategy, k=5)
        )
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


def test_what_nothing_found_mentions_goes_to_the_model(memory):
    """Never refused unread: a word may be misheard past any sound-alike and still be in a line."""
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "Nothing about a car.", "answer": "NOT_FOUND"})
    answer = ask(memory, llm, "Where did I park my car?", asked_at=ts(DAY2, 3600), k=3)
    assert llm.sent and answer.abstained and answer.evidence  # the moments found are still shown


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
    request = AskRequest.make("What did I do on day 2?", memory.settings, asked_at=ts(DAY2, 3600), strategy="hybrid", k=20)
    found = retrieve(memory, request)
    days = {from_ts(ev.start).date() for ev in found.evidence}
    assert found.window is not None and days == {datetime(2024, 3, 13).date()}  # the chat (10 March) is day 1


def test_windows_are_described_as_people_read_them():
    day = ts(datetime(2024, 3, 13))
    assert describe(TimeWindow(day, day + 86400, "yesterday")) == "yesterday (Wed 13 Mar 2024)"
    assert describe(TimeWindow(day + 9 * 3600, day + 9.5 * 3600, "")) == "Wed 13 Mar 2024, 09:00-09:30"


def test_eval_measures_the_path_the_app_ships(memory, tmp_path):
    """`egodesk eval` answers a question as the app (`Library.ask`, through its `Asker`) does: the same moments found, the
    same prompt sent to the model, the same answer taken from the same reply."""
    question = _bench("When did I last take milk?")
    reply = {"evidence": ["E1"], "reasoning": "Milk was taken.", "answer": "At 09:01:20"}
    app_llm, eval_llm = ScriptedLLM(reply), ScriptedLLM(reply)
    app = Asker.over(memory, app_llm).ask(question.question, asked_at=question.asked_at, strategy="auto", k=5)
    [result] = run_questions(memory, [question], "auto", k=5, llm=eval_llm)
    assert app_llm.sent and eval_llm.sent == app_llm.sent  # the prompt and its schema, to the character
    assert {r["unit"] for r in result.detail["retrieved"]} == {ev.unit_id for ev in app.evidence}
    assert (result.detail["answer"], result.detail["cited"]) == (app.text, app.cited) and app.text.startswith("At 09:01:20")
    assert (result.grounded, result.abstained) == (app.grounded, app.abstained) == (True, False)


def test_a_question_read_ahead_while_typed_is_the_prompt_asking_it_sends_up_to_its_asked_time(memory):
    question = "When was the last time I did this: take paper?"
    reply = {"evidence": ["E1"], "reasoning": "The latest take paper.", "answer": "at 09:00:50"}
    llm = ScriptedLLM(reply, reply)
    typer = Asker.over(memory, llm)
    typed_at = typer.prepare(question)
    ask(memory, llm, question)  # later, by another: asked now
    typer.ask(question)  # asked as it was typed: at the time it was typed
    ((read, read_schema, reply_tokens),), ((sent, schema), (sent_as_typed, _)) = llm.read, llm.sent
    assert read_schema == schema and reply_tokens == MAX_TOKENS  # its reply is written ahead as the ask's is
    assert read[0] == sent[0] and "take paper" in read[1]["content"]
    head = read[1]["content"].split("Asked at:")[0]
    assert head.endswith("</evidence>\n") and sent[1]["content"].startswith(head)  # only the time asked may differ
    assert sent_as_typed == read  # asked at the time it was typed: the very prompt read

    quiet = ScriptedLLM()
    # The model will not be asked (no footage then), but the time asked counts.
    asker = Asker.over(memory, quiet)
    assert asker.prepare("What did I take at 3 pm?", asked_at=ts(DAY2)) == ts(DAY2)
    assert asker.prepare(question, should_stop=lambda: True) is None  # asked meanwhile
    assert asker.prepare("   ") is None  # nothing typed yet
    assert not quiet.read and typed_at is not None


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


def test_a_question_asked_as_it_was_read_ahead_is_asked_at_the_time_it_was_typed(memory):
    """An Asker asks a question read ahead unchanged (a pause in typing, then Enter) at the time its read
    prompt says, so that prompt is the one sent; an edited, late or explicitly timed one is not."""
    question = "When was the last time I did this: take paper?"
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "The latest take paper.", "answer": "at 09:00:50"}, repeat_last=True)
    clock = [100.0]
    asker = Asker.over(memory, llm, clock=lambda: clock[0])
    typed_at = ts(DAY1, 100)
    assert asker.prepare("When was the last  time I did this: take paper?", asked_at=typed_at) == typed_at
    asker.ask(f"{question} ")
    assert llm.sent[-1][0] == llm.read[-1][0] and "Asked at: Wed 13 March 2024 09:01:40" in llm.sent[-1][0][1]["content"]
    asker.ask(question, asked_at=ts(DAY2))  # a time given: that time, and the one kept stays
    assert "Asked at: Thu 14 March 2024" in llm.sent[-1][0][1]["content"] and asker.asked_at(question) == typed_at
    asker.ask(question, options=["09:00:50", "09:00:00"])  # another question: asked now
    asker.ask("Where did I put the paper?")
    now = to_ts(datetime.now())
    assert all(
        abs(asker.asked_at(q, o) - now) < 60
        for q, o in ((question, ["09:00:50", "09:00:00"]), ("Where did I put the paper?", None))
    )
    clock[0] += ASKED_AT_KEPT_S + 1  # too late: asked now
    assert asker.asked_at(question) is None
    asker.ask(question)
    assert abs(asker.asked_at(question) - now) < 60


def test_a_question_asked_again_a_moment_later_is_asked_at_the_time_it_was_first_asked(memory):
    """Asked again within ASKED_AT_KEPT_S of its first asking (or read again while retyped), a question is
    asked at its first time, so its prompt is the one already answered and gets that answer; a changed
    question gets a time of its own; the time kept is never older than ASKED_AT_KEPT_S, however often
    the question is asked."""
    question = "When was the last time I did this: take paper?"
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "The latest take paper.", "answer": "at 09:00:50"}, repeat_last=True)
    clock = [100.0]
    asker = Asker.over(memory, llm, clock=lambda: clock[0])
    asker.ask(question)
    first = asker.asked_at(question)
    assert first is not None
    clock[0] += 70
    retyped = asker.prepare("When was the last time")  # retyped: read as typed so far, at a time of its own
    assert retyped is not None and retyped > first
    asker.ask(f" {question.replace(' ', '  ')}")
    assert asker.prepare(question) == asker.asked_at(question) == first
    assert llm.sent[0] == llm.sent[1] and llm.read[-1][0] == llm.sent[0][0]  # the very prompt, to the second
    asker.ask("When was the last time I did this: take milk?")  # changed: a new time
    assert asker.asked_at("When was the last time I did this: take milk?") > first
    clock[0] += 60  # 130 s after the first asking
    assert asker.asked_at(question) is None
    asker.ask(question)
    assert asker.asked_at(question) > first


def test_a_stated_time_answer_is_what_was_said_not_the_moments_time(memory):
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "Melanie said when.", "answer": "At 4 pm"})
    answer = ask(memory, llm, "When is the charity race?", asked_at=ts(DAY2, 3600), k=3, strategy="hybrid")
    assert answer.text == "At 4 pm"  # not "At 4 pm, on <the chat's day> at <its time>"
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "I took the paper then.", "answer": "When I took the paper"})
    answer = ask(memory, llm, "When did I take the paper?", asked_at=ts(DAY2, 3600), k=3, strategy="hybrid")
    assert answer.text.startswith("When I took the paper, on ")  # a moment's when keeps its day and time
