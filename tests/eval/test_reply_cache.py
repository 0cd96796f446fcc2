import json

from egodesk.eval.reply_cache import ReplyCache
from tests.doubles import ScriptedLLM

MESSAGES = [{"role": "system", "content": "rules"}, {"role": "user", "content": "<evidence>E1 I take paper.</evidence>"}]
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}}


def test_a_greedy_reply_is_kept_and_given_again_without_the_model(tmp_path):
    llm = ScriptedLLM({"answer": "paper"}, delay=0.05)
    cache = ReplyCache(llm, tmp_path / "replies.sqlite")
    assert cache.chat(MESSAGES, max_tokens=50, schema=SCHEMA) == (json.dumps({"answer": "paper"}), 321)
    assert cache.saved_seconds == 0.0  # asked: nothing saved yet
    assert cache.chat(MESSAGES, max_tokens=50, schema=SCHEMA) == (json.dumps({"answer": "paper"}), 321)
    assert len(llm.sent) == 1 and 0.05 <= cache.saved_seconds < 5.0  # what the model took the first time
    cache.close()
    reopened = ReplyCache(ScriptedLLM(), tmp_path / "replies.sqlite")  # kept on disk: a rerun asks nothing
    assert reopened.chat(MESSAGES, max_tokens=50, schema=SCHEMA)[0] == json.dumps({"answer": "paper"})


def test_anything_that_changes_the_reply_is_asked_again(tmp_path):
    llm = ScriptedLLM(*[{"answer": str(n)} for n in range(5)])
    cache = ReplyCache(llm, tmp_path / "replies.sqlite")
    cache.chat(MESSAGES, max_tokens=50, schema=SCHEMA)
    cache.chat(MESSAGES[:1] + [{"role": "user", "content": "another question"}], max_tokens=50, schema=SCHEMA)
    cache.chat(MESSAGES, max_tokens=60, schema=SCHEMA)
    cache.chat(MESSAGES, max_tokens=50, schema={**SCHEMA, "required": ["answer"]})
    assert cache.chat(MESSAGES, max_tokens=50, temperature=0.3, schema=SCHEMA)[0] == json.dumps({"answer": "4"})  # sampled
    assert len(llm.sent) == 5
    other_model = ScriptedLLM({"answer": "from the other model"})
    other_model.model_id = "another-model"
    assert ReplyCache(other_model, tmp_path / "replies.sqlite").chat(MESSAGES, max_tokens=50, schema=SCHEMA)[0] == json.dumps(
        {"answer": "from the other model"}
    )
