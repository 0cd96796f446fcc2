"""The shared test doubles stand in for what they double: every member of the `LLM` protocol, each
method taking the protocol's parameters, by name and kind, with the same defaults."""

import inspect

import pytest

from egodesk.perception.llm import LLM
from tests.doubles import ScriptedLLM


def protocol_methods(protocol) -> list[str]:
    return [name for name, value in vars(protocol).items() if inspect.isfunction(value) and not name.startswith("_")]


def test_the_protocol_names_what_a_chat_model_does():
    assert {"chat", "count_tokens", "keep_prefix", "prefill", "yes_probability"} <= set(protocol_methods(LLM))


@pytest.mark.parametrize("attribute", sorted(LLM.__annotations__))
def test_the_scripted_llm_has_the_protocol_attribute(attribute):
    assert hasattr(ScriptedLLM(), attribute)


@pytest.mark.parametrize("method", protocol_methods(LLM))
def test_the_scripted_llm_takes_every_parameter_of_the_protocol_method(method):
    wanted = inspect.signature(getattr(LLM, method)).parameters
    given = inspect.signature(getattr(ScriptedLLM, method)).parameters
    for name, parameter in wanted.items():
        assert name in given, f"ScriptedLLM.{method} lacks {name}"
        assert (given[name].kind, given[name].default) == (parameter.kind, parameter.default), f"ScriptedLLM.{method}({name})"
    assert all(p.default is not inspect.Parameter.empty for n, p in given.items() if n not in wanted), method


def test_the_scripted_llm_replies_in_order_streams_and_records():
    pieces: list[str] = []
    llm = ScriptedLLM({"answer": "a"}, "plain", ValueError("down"))
    assert llm.chat([{"role": "user", "content": "q"}], on_text=pieces.append) == ('{"answer": "a"}', 321)
    assert "".join(pieces) == '{"answer": "a"}' and len(pieces) > 1
    assert llm.chat([], schema={"type": "object"})[0] == "plain"
    with pytest.raises(ValueError, match="down"):
        llm.chat([])
    assert llm.calls == 3 and llm.sent[1] == ([], {"type": "object"})
    again = ScriptedLLM("same", repeat_last=True)
    assert [again.chat([])[0] for _ in range(3)] == ["same"] * 3
    judge = ScriptedLLM(0.25)
    assert judge.yes_probability([{"role": "user", "content": "relevant?"}]) == 0.25 and len(judge.judged) == 1
