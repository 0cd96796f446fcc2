from egodesk.core.types import Evidence
from egodesk.reasoning.answerer import answer_question
from egodesk.reasoning.speakers import misattributed, turns
from tests.doubles import ScriptedLLM


def line(uid, text):
    return Evidence(uid, 1, "chat", 1000.0 + uid, 1005.0 + uid, text, 1.0)


ANA = line(1, "Ana: I adopted a grey cat named Pixel last week!")
BEN = line(2, "Ben: Lovely, my dog will hate it.")


def test_an_answer_resting_on_another_speakers_own_words_is_misattributed():
    assert (
        misattributed("What pet did Ben adopt?", "a grey cat named Pixel", [ANA], [ANA, BEN])
        == "Ana said this of themselves; the question asks about Ben"
    )


def test_the_speaker_asked_about_or_words_said_to_them_are_not():
    assert misattributed("What pet did Ana adopt?", "a grey cat named Pixel", [ANA], [ANA, BEN]) is None
    told = line(3, "Ana: Ben, I heard you adopted a grey cat!")
    assert misattributed("What pet did Ben adopt?", "a grey cat", [told], [told, BEN]) is None


def test_calling_the_person_asked_about_by_name_is_not_speaking_of_them():
    # LoCoMo: "What did Caroline realize after her charity race?" found Melanie's race, told to Caroline.
    for text in (
        "Ana: Hey Ben, I ran a charity race last week!",
        "Ana: Thanks, Ben! I ran a charity race.",
        "Ana: Ben, I ran a charity race.",
        "Ana: I ran a charity race, Ben!",
    ):
        said = line(5, text)
        assert (
            misattributed("What did Ben realize after his charity race?", "a charity race", [said], [said, BEN])
            == "Ana said this of themselves; the question asks about Ben"
        ), text
    for text in (
        "Ana: I ran a charity race with Ben.",
        "Ana: Ben and I ran a charity race.",
        "Ana: Hey Ben, I ran Ben's charity race.",
    ):
        said = line(6, text)
        assert misattributed("What did Ben realize after his charity race?", "a charity race", [said], [said, BEN]) is None, text


def test_no_verdict_without_dialogue_one_named_speaker_or_shared_words():
    caption = line(4, "I take a grey cat toy from the shelf.")
    assert misattributed("What did Ben take?", "a grey cat toy", [caption], [caption, BEN]) is None
    assert misattributed("What did Ana and Ben talk about?", "a grey cat", [ANA], [ANA, BEN]) is None
    assert misattributed("What pet did Ben adopt?", "a parrot", [ANA], [ANA, BEN]) is None


def test_the_answerer_abstains_on_a_misattributed_answer_and_says_why():
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "Ana adopted Pixel.", "answer": "a grey cat named Pixel"})
    answer = answer_question(llm, "What pet did Ben adopt?", [ANA, BEN])
    assert answer.abstained and not answer.grounded and "Ana said this of themselves" in answer.extra["unsupported"]
    right = answer_question(
        ScriptedLLM({"evidence": ["E1"], "reasoning": "-", "answer": "a grey cat named Pixel"}),
        "What pet did Ana adopt?",
        [ANA, BEN],
    )
    assert not right.abstained and right.cited == [1]


def test_every_turn_of_a_footage_line_counts_the_wearers_too():
    heard = line(7, "I hear: 'Sam: Did you call the garage? me: Yes, I will pick the car up at noon.' Visible text: 'BINS OUT'.")
    assert turns(heard.text) == [("Sam", "Did you call the garage?"), ("me", "Yes, I will pick the car up at noon.")]
    # A title's colon after a plain word is no turn, nor a sign's capitals.
    assert turns("Nate: The game was called Counter-Strike: Global Offensive.") == [
        ("Nate", "The game was called Counter-Strike: Global Offensive.")
    ]
    assert turns("I see a sign. Visible text: 'DEPARTURES: DUBLIN 13:15'.") == []
    assert (
        misattributed("What did Sam say about the car?", "pick the car up at noon", [heard], [heard])
        == "me said this of themselves; the question asks about Sam"
    )
    # A question that speaks of the wearer asks about their words as well.
    assert misattributed("What did I tell Sam about the car?", "pick the car up at noon", [heard], [heard]) is None


def test_a_person_the_library_knows_counts_though_no_line_shown_is_theirs():
    # "What did Declan say on Tuesday?": Declan was not heard that day; the wearer's words are not his.
    mine = line(8, "Sam: The plumber is coming on Friday. me: Then I will work from home.")
    assert misattributed("What did Declan say on Tuesday?", "work from home", [mine], [mine]) is None
    assert (
        misattributed("What did Declan say on Tuesday?", "work from home", [mine], [mine], known=["Declan"])
        == "me said this of themselves; the question asks about Declan"
    )


def test_the_answerer_takes_the_people_its_note_names_as_known():
    mine = line(9, "Sam: The plumber is coming on Friday. me: Then I will work from home.")
    llm = ScriptedLLM({"evidence": ["E1"], "reasoning": "-", "answer": "work from home"})
    answer = answer_question(llm, "What did Declan say on Tuesday?", [mine], heard=[("Declan", ())])
    assert answer.abstained and "the question asks about Declan" in answer.extra["unsupported"]
