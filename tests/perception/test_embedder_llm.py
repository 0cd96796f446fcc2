"""Real models from the manifest: an embedding from the embedder, one token from the llm-test GGUF."""

import numpy as np
import pytest

from egodesk.perception.llm import PREFILL_TOKENS, LLMError, chat_json, parse_json


def test_embeddings_are_unit_vectors_and_semantic(embedder):
    vectors = embedder.embed_documents(["I take the plate.", "I pick up a dish.", "Interest rates rose again."])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3


def test_embedding_is_independent_of_batch_padding(embedder):
    alone = embedder.embed_documents(["a short text"])[0]
    batched = embedder.embed_documents(["a short text", "a much longer text that forces padding in the batch " * 5])[0]
    assert float(alone @ batched) > 0.9999


def test_one_token_completion(tiny_llm):
    text, prompt_tokens = tiny_llm.chat([{"role": "user", "content": "Say hello."}], max_tokens=1)
    assert text and prompt_tokens > 0


def test_schema_constrained_json(tiny_llm):
    schema = {"type": "object", "properties": {"answer": {"enum": ["A", "B"]}}, "required": ["answer"]}
    data, _ = chat_json(tiny_llm, [{"role": "user", "content": "Pick A or B as JSON."}], schema, max_tokens=20)
    assert data["answer"] in {"A", "B"}


def _library_reply(llm, messages, schema, max_tokens, temperature=0.0):
    """llama-cpp-python's own chat completion: its sampler applies the grammar to every token of the vocabulary."""
    llm._llama.reset()
    out = llm._llama.create_chat_completion(
        messages,
        max_tokens=max_tokens,
        temperature=temperature,
        seed=0,
        response_format={"type": "json_object", "schema": schema},
    )
    return out["choices"][0]["message"]["content"]


def test_a_greedy_schema_reply_is_the_one_the_whole_vocabulary_grammar_gives(tiny_llm, monkeypatch):
    """Asking the grammar only about the greedy token gives the reply that filtering every token does,
    including where the greedy token is refused (an enum value the model would not write first).
    Nothing is drafted, so both evaluate one token a step: a batch's arithmetic differs from one token's
    in the last bits (AVX-512 builds), which can flip this tiny model's near ties ("open" / "close")."""
    from egodesk.perception import decoding

    monkeypatch.setattr(decoding, "DRAFT_TOKENS", 0)
    item = {
        "type": "object",
        "properties": {"id": {"enum": [1, 2, 3]}, "action": {"type": "string"}, "tag": {"enum": ["zebra-7", "quokka-9"]}},
        "required": ["id", "action", "tag"],
    }
    schema = {
        "type": "object",
        "properties": {"records": {"type": "array", "items": item, "maxItems": 3}},
        "required": ["records"],
    }
    messages = [
        {"role": "system", "content": "Write one record per numbered entry as JSON."},
        {"role": "user", "content": "1. I open the fridge.\n2. I take the milk.\n3. I close the fridge."},
    ]
    text, _ = tiny_llm.chat(messages, max_tokens=90, schema=schema)
    assert text == _library_reply(tiny_llm, messages, schema, 90)
    data = parse_json(text)
    assert data["records"] and all(r["tag"] in {"zebra-7", "quokka-9"} for r in data["records"])


def test_a_reply_that_copies_its_prompt_takes_fewer_steps_than_tokens_and_is_the_same_reply(tiny_llm, monkeypatch):
    """Drafted tokens (what followed the same words in the prompt) are checked in one batch: a copied
    sentence takes fewer model steps than it has tokens, and the reply is the one drafting nothing gives."""
    from egodesk.perception import decoding

    schema = {"type": "object", "properties": {"sentence": {"type": "string"}}, "required": ["sentence"]}
    messages = [{"role": "user", "content": 'Copy this sentence into JSON: "The blue bowl by the kitchen window holds my keys."'}]
    steps = []
    decode = tiny_llm._llama._ctx.decode
    monkeypatch.setattr(tiny_llm._llama._ctx, "decode", lambda batch: (steps.append(batch.batch.n_tokens), decode(batch))[1])
    drafted, _ = tiny_llm.chat(messages, max_tokens=40, schema=schema)
    drafted_steps = len(steps) - 1  # the first step reads the prompt
    monkeypatch.setattr(decoding, "DRAFT_TOKENS", 0)
    tiny_llm._written.clear()  # else asked again it is answered with the reply it got
    steps.clear()
    plain, _ = tiny_llm.chat(messages, max_tokens=40, schema=schema)
    assert "kitchen window" in drafted and drafted == plain
    assert drafted_steps < 0.8 * (len(steps) - 1) and max(steps[1:]) == 1


def test_a_prompt_asked_again_gets_the_reply_the_model_ended_before_nothing_evaluated(tiny_llm, monkeypatch):
    """The same prompt and schema, asked again after others, get the greedy reply the model ended to
    them, streamed, with no model step: written again, batches set by other drafts could tip a near tie.
    A reply cut short, a sampled one or one to another schema is written anew; a read-ahead of a prompt
    answered before takes that answer too."""
    schema = {"type": "object", "properties": {"place": {"type": "string"}}, "required": ["place"]}
    messages = [{"role": "user", "content": "I put my keys in the blue bowl. Where are my keys? Reply in JSON."}]
    steps = []
    decode = tiny_llm._llama._ctx.decode
    monkeypatch.setattr(tiny_llm._llama._ctx, "decode", lambda batch: (steps.append(1), decode(batch))[1])

    def unrelated() -> None:
        tiny_llm.chat([{"role": "user", "content": "Name a fruit."}], max_tokens=3)

    first, _ = tiny_llm.chat(messages, max_tokens=60, schema=schema)
    assert first.rstrip().endswith("}")  # the model ended it
    unrelated()
    steps.clear()
    shown: list[str] = []
    again, _ = tiny_llm.chat(messages, max_tokens=60, schema=schema, on_text=shown.append)
    assert again == first == "".join(shown) and steps == []
    tiny_llm.prefill(messages, schema=schema, max_tokens=60)
    assert steps == [] and tiny_llm._ahead.reply == tiny_llm._written[-1].reply  # read ahead: the same reply

    for room, temperature, other in ((3, 0.0, schema), (60, 0.7, schema), (60, 0.0, {**schema, "required": []})):
        steps.clear()
        tiny_llm.chat(messages, max_tokens=room, temperature=temperature, schema=other)
        assert steps  # cut short, sampled, another schema: written anew
    steps.clear()
    assert tiny_llm.chat(messages, max_tokens=60, schema=schema)[0] == first and steps == []  # none replaced it


def test_a_sampled_schema_reply_keeps_to_the_schema(tiny_llm):
    schema = {"type": "object", "properties": {"colour": {"enum": ["teal", "ochre"]}}, "required": ["colour"]}
    messages = [{"role": "user", "content": "Name a colour as JSON."}]
    for _ in range(3):
        text, _ = tiny_llm.chat(messages, max_tokens=20, temperature=1.0, schema=schema)
        assert parse_json(text)["colour"] in {"teal", "ochre"}


def test_a_prompt_longer_than_the_context_is_an_llm_error(tiny_llm):
    with pytest.raises(LLMError, match="context window"):
        tiny_llm.chat([{"role": "user", "content": "word " * 20000}], max_tokens=4)


def test_yes_probability_reuses_the_shared_prefix_and_scores_the_same(tiny_llm, monkeypatch):
    """Judging passages of one question re-evaluates only each passage, and the scores equal a cold start."""

    def judge(passage):
        return [
            {"role": "system", "content": "Reply yes if the passage helps answer the question, else no. " * 4},
            {"role": "user", "content": f"Question: where did I put the keys?\n\nPassage: {passage}"},
        ]

    passages = ["I put the keys in the blue bowl by the door.", "Interest rates rose again in March."]
    evaluated = []
    real_eval = tiny_llm._llama.eval
    monkeypatch.setattr(tiny_llm._llama, "eval", lambda tokens: (evaluated.append(len(tokens)), real_eval(tokens))[1])
    tiny_llm.chat([{"role": "user", "content": "Say hello."}], max_tokens=1)  # something else in the cache first
    evaluated.clear()
    warm = [tiny_llm.yes_probability(judge(p)) for p in passages]
    again = tiny_llm.yes_probability(judge(passages[0]))
    whole = len(tiny_llm._llama.tokenize(tiny_llm._format(judge(passages[1])).encode(), add_bos=False, special=True))
    assert evaluated[0] >= whole / 2 and max(evaluated[1:]) < whole / 3  # after the first: the passage and the template's end
    tiny_llm.chat([{"role": "user", "content": "Something unrelated."}], max_tokens=1)
    cold = tiny_llm.yes_probability(judge(passages[1]))
    assert again == pytest.approx(warm[0], abs=1e-3) and cold == pytest.approx(warm[1], abs=1e-3)


def test_a_streamed_reply_is_the_reply(tiny_llm):
    pieces: list[str] = []
    messages = [{"role": "user", "content": "Count from one to five."}]
    text, prompt_tokens = tiny_llm.chat(messages, max_tokens=12, on_text=pieces.append)
    assert len(pieces) > 1 and "".join(pieces) == text and prompt_tokens > 0
    assert tiny_llm.chat(messages, max_tokens=12) == (text, prompt_tokens)


def test_a_kept_prompt_head_is_evaluated_once_and_reused_after_other_prompts(tiny_llm, monkeypatch):
    """Prompts of one family (the answerer's rules, then each question's evidence) evaluate only what
    follows the kept head, even after another prompt replaced the context, and read it as a cold start."""
    rules = {"role": "system", "content": "You answer from the evidence only, in one short sentence. " * 8}

    def prompt(text):
        return [rules, {"role": "user", "content": f"<evidence>\n{text}"}]

    def next_token_logits():
        """What the model makes of the prompt: the logits its reply's first token was picked from (a
        one-token reply evaluates nothing after the prompt)."""
        import llama_cpp
        import numpy as np

        llama = tiny_llm._llama
        return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama.ctx, -1), shape=(llama.n_vocab(),)).copy()

    question = prompt("E1 I put the keys in the bowl. Where are the keys?")
    cold = tiny_llm.chat(question, max_tokens=1)
    cold_logits = next_token_logits()
    tiny_llm.keep_prefix(prompt(""))
    evaluated = []
    real_eval = tiny_llm._llama.eval
    monkeypatch.setattr(tiny_llm._llama, "eval", lambda tokens: (evaluated.append(len(tokens)), real_eval(tokens))[1])
    tiny_llm.chat([{"role": "user", "content": "Something unrelated."}], max_tokens=1)
    evaluated.clear()
    warm = tiny_llm.chat(question, max_tokens=1)
    head = len(tiny_llm._tokens(tiny_llm._format([rules])))
    # The same computation up to rounding: the prompt read in two batches instead of one sums in another
    # order (an AVX-512 build: up to 0.52 on logits near 33, enough to swap two nearly tied first words;
    # a head restored at the wrong place differs by whole units).
    warm_logits = next_token_logits()
    assert warm[1] == cold[1] and abs(warm_logits - cold_logits).max() < 0.03 * abs(cold_logits).max()
    assert evaluated[0] < warm[1] - head + 4  # the prompt's first evaluation: its evidence and question, not the rules


def test_a_reply_depends_on_its_prompt_alone_not_on_what_was_asked_before(tiny_llm, monkeypatch):
    """A question's prompt (after a kept head) is read in the same batches and its reply drafted from
    the prompt alone: asked after another question that shared all its evidence
    and wrote a reply of its own, it is read to the same logits, bit for bit, and its reply is written
    in the same steps to the same words as after an unrelated prompt. Read from wherever the last
    prompt left off and drafted from recent replies, near ties tipped with the questions asked before."""
    import llama_cpp
    import numpy as np

    rules = {"role": "system", "content": "You answer from the evidence only, in JSON. " * 6}
    evidence = "\n".join(f"E{i} 08:{i:02d}:00 I put the keys in bowl number {i} by the door." for i in range(1, 25))
    schema = {
        "type": "object",
        "properties": {"evidence": {"type": "array", "items": {"type": "string"}}, "answer": {"type": "string"}},
        "required": ["evidence", "answer"],
    }

    def prompt(question: str):
        return [rules, {"role": "user", "content": f"<evidence>\n{evidence}\n</evidence>\nQuestion: {question}"}]

    tiny_llm.keep_prefix([rules, {"role": "user", "content": "<evidence>\n"}])
    steps: list[int] = []
    decode = tiny_llm._llama._ctx.decode
    monkeypatch.setattr(tiny_llm._llama._ctx, "decode", lambda batch: (steps.append(batch.batch.n_tokens), decode(batch))[1])

    def asked_after(before) -> tuple[np.ndarray, str, list[int]]:
        before()
        tiny_llm.chat(prompt("Where are the keys?"), max_tokens=1)  # one token: the prompt read, nothing after
        llama = tiny_llm._llama
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama.ctx, -1), shape=(llama.n_vocab(),)).copy()
        steps.clear()
        text, _ = tiny_llm.chat(prompt("Where are the keys?"), max_tokens=14, schema=schema)  # cut short: written anew
        return logits, text, list(steps)

    cold = asked_after(lambda: tiny_llm.chat([{"role": "user", "content": "Something unrelated."}], max_tokens=1))
    warm = asked_after(lambda: tiny_llm.chat(prompt("Which bowl is by the door?"), max_tokens=14, schema=schema))
    assert np.array_equal(cold[0], warm[0])
    assert cold[1:] == warm[1:] and len(cold[2]) > 1


def test_a_prompt_read_ahead_leaves_its_chat_only_the_changed_end_and_a_stop_cuts_it_short(tiny_llm, monkeypatch):
    """A question read while typed: asking it evaluates only what differs after its evidence (here the
    time it is asked at), with the reply a cold start gives; a read told to stop reads no further part."""
    evidence = "\n".join(f"E{i} 08:{i:02d}:00 I put the keys in bowl number {i} by the door." for i in range(1, 40))

    def prompt(asked: str):
        return [
            {"role": "system", "content": "Answer from the evidence only."},
            {"role": "user", "content": f"<evidence>\n{evidence}\n</evidence>\nAsked at: {asked}\nQuestion: Where are the keys?"},
        ]

    tiny_llm.chat([{"role": "user", "content": "Something unrelated."}], max_tokens=1)
    cold = tiny_llm.chat(prompt("09:00:05"), max_tokens=8)
    evaluated = []
    real_eval = tiny_llm._llama.eval
    monkeypatch.setattr(tiny_llm._llama, "eval", lambda tokens: (evaluated.append(len(tokens)), real_eval(tokens))[1])
    tiny_llm.chat([{"role": "user", "content": "Something unrelated."}], max_tokens=1)
    evaluated.clear()
    tiny_llm.prefill(prompt("09:00:00"))
    whole = sum(evaluated)
    evaluated.clear()
    warm = tiny_llm.chat(prompt("09:00:05"), max_tokens=8)
    assert whole > 300 and sum(evaluated) < 20  # the asked-at time on, and the reply's own tokens
    assert warm[1] == cold[1]

    tiny_llm.chat([{"role": "user", "content": "Something unrelated."}], max_tokens=1)
    evaluated.clear()
    asks = []

    def asked() -> bool:
        asks.append(1)
        return len(asks) > 2

    tiny_llm.prefill(prompt("09:00:00"), should_stop=asked)
    assert evaluated == [PREFILL_TOKENS, PREFILL_TOKENS]  # two parts read, the third never begun


def test_a_reply_written_ahead_is_checked_in_one_step_by_the_ask_it_drafts(tiny_llm, monkeypatch):
    """A question read while typed, its reply written too: asked, its reply is the one written ahead,
    checked by the model in one step instead of written again token by token; asked with the very prompt
    read ahead, a reply the model ended is taken as it is, nothing evaluated. What the model would not
    write is not taken; a read-ahead stopped halfway still drafts what it wrote. Only a prompt that
    differs from the one read ahead in its last tokens (the time asked, the question's end) is drafted:
    the tiny model's reply may change even with the time asked, which the check then finds."""
    # One line holds the answer: lines alike leave the tiny model's pick of a line a near tie, which the
    # one-step check's arithmetic can tip.
    lines = [f"E{i} 08:{i:02d}:00 I walk past bowl number {i} by the door." for i in range(1, 29)]
    lines.append("E29 08:29:00 I put the keys in bowl number 29 by the door.")
    evidence = "\n".join(lines)
    schema = {
        "type": "object",
        "properties": {"evidence": {"type": "string"}, "answer": {"type": "string"}},
        "required": ["evidence", "answer"],
    }

    def prompt(asked: str):
        return [
            {"role": "system", "content": "Answer from the evidence only, in JSON."},
            {"role": "user", "content": f"<evidence>\n{evidence}\n</evidence>\nAsked at: {asked}\nQuestion: Where are the keys?"},
        ]

    def unrelated() -> None:
        tiny_llm.chat([{"role": "user", "content": "Something unrelated."}], max_tokens=1)

    def ahead_text() -> str:
        return tiny_llm._llama.detokenize(tiny_llm._ahead.reply).decode()

    steps = []
    real_decode = tiny_llm._llama._ctx.decode
    monkeypatch.setattr(tiny_llm._llama._ctx, "decode", lambda batch: (steps.append(1), real_decode(batch))[1])
    unrelated()
    steps.clear()
    cold, _ = tiny_llm.chat(prompt("09:00:00"), max_tokens=40, schema=schema)
    cold_steps = len(steps)
    unrelated()
    tiny_llm.prefill(prompt("09:00:00"), schema=schema, max_tokens=40)
    written = ahead_text()
    steps.clear()
    warm, _ = tiny_llm.chat(prompt("09:00:00"), max_tokens=40, schema=schema)
    assert warm == written and warm.startswith('{ "evidence"')
    assert len(steps) <= 2 < cold_steps - 4  # the reply written ahead was cut short: checked in one step
    assert tiny_llm._ahead is None  # it drafts the one ask that follows

    unrelated()
    tiny_llm.prefill(prompt("09:00:00"), schema=schema, max_tokens=200)
    whole = ahead_text()
    assert whole.rstrip().endswith("}")  # the model ended it
    steps.clear()
    shown: list[str] = []
    again, _ = tiny_llm.chat(prompt("09:00:00"), max_tokens=200, schema=schema, on_text=shown.append)
    assert again == whole == "".join(shown) and steps == []  # the same prompt: its reply, nothing evaluated
    unrelated()
    tiny_llm.prefill(prompt("09:00:00"), schema=schema, max_tokens=200)
    tiny_llm.chat(prompt("09:00:00"), max_tokens=200, schema={**schema, "required": ["answer"]})
    assert steps  # a reply written to another schema is not taken whole
    tiny_llm.prefill(prompt("09:00:00"), schema=schema, max_tokens=1)
    later = tiny_llm._format(prompt("09:00:05"))
    assert tiny_llm._guide(tiny_llm._tokens(later)) is not None
    assert tiny_llm._guide(tiny_llm._tokens(later.replace("E2 08:02", "E2 08:03"))) is None  # other evidence

    unrelated()
    tiny_llm.prefill(prompt("09:00:00"), schema=schema, max_tokens=40)
    good = tiny_llm._ahead.reply
    wrong = tiny_llm._tokens(" lemon")[0]
    tiny_llm._ahead.reply = [*good[:6], wrong, *good[7:]]  # a draft the model would not write
    checked, _ = tiny_llm.chat(prompt("09:00:00"), max_tokens=40, schema=schema)
    assert checked.startswith(tiny_llm._llama.detokenize(good[:7]).decode()) and "lemon" not in checked

    unrelated()
    asks = []
    parts = len(tiny_llm._tokens(tiny_llm._format(prompt("09:00:00")))) // PREFILL_TOKENS + 1  # a start may be kept

    def asked() -> bool:
        asks.append(1)
        return len(asks) > parts + 4  # some of the reply written, then asked

    tiny_llm.prefill(prompt("09:00:00"), should_stop=asked, schema=schema, max_tokens=40)
    partial = ahead_text()
    assert 0 < len(tiny_llm._ahead.reply) < len(good)
    steps.clear()
    assert tiny_llm.chat(prompt("09:00:00"), max_tokens=40, schema=schema)[0].startswith(partial)
    assert len(steps) < cold_steps  # what was written ahead took one step


def test_malformed_json_is_retried_then_reported():
    class Garbage:
        model_id = "garbage"
        calls = 0

        def chat(self, messages, max_tokens=256, temperature=0.0, schema=None):
            self.calls += 1
            return "this is not json", 3

    llm = Garbage()
    with pytest.raises(LLMError, match="valid JSON"):
        chat_json(llm, [], {"type": "object"})
    assert llm.calls == 3
    assert parse_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json('Sure! {"a": 2} hope that helps') == {"a": 2}


def test_a_looping_reply_is_stopped_and_its_complete_items_kept():
    from egodesk.perception.decoding import repeating
    from egodesk.perception.llm import looped_part

    block = list(range(100, 112))
    assert repeating([1, 2, 3] + block * 3) and not repeating([1, 2, 3] + block * 2)
    assert not repeating(list(range(300)))
    item = '{"view":"utterance","text":"I ask what you can do, \\"for\\" your country","ids":[1]}'
    looping = '{"statements":[{"view":"action","text":"I walk","ids":[2]},' + ",".join([item] * 3) + ',{"view":"utt'
    data = looped_part(looping)
    assert data["statements"][0]["text"] == "I walk" and len(data["statements"]) == 4
    assert looped_part('{"statements":[{"view":"action","text":"I walk","ids":[2]},{"view":"utt') is None  # cut off, not looping


def test_a_looped_reply_is_kept_only_where_asked():
    class Looping:
        model_id = "looping"

        def chat(self, messages, max_tokens=256, temperature=0.0, schema=None):
            return '{"records":[{"id":1,"action":"say"},{"id":1,"action":"say"},{"id":1,"act', 5

    assert chat_json(Looping(), [], {"type": "object"}, keep_looped=True)[0] == {"records": [{"id": 1, "action": "say"}] * 2}
    with pytest.raises(LLMError):
        chat_json(Looping(), [], {"type": "object"})
