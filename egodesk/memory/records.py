"""Imprint's interaction records: one LLM pass over a batch of clips, and the records it writes.

The LLM reads a batch of clips (caption + transcript, the wearer's name prepended as the paper does)
and writes zero or more records per clip through a JSON schema: {persons, action, object, tool,
location, said, attributes}; start and end are the clip's. The paper keeps speech verbatim: the reply
names the transcript line a record comes from (`said`, its number) and the record takes that line as it
is, instead of the model copying it out token by token (on LoCoMo's dialogue, most of the output).
A reply cut off by its token budget is split and retried (`extract_records`).

Extraction only: it neither reads nor writes the library and embeds nothing. `record_compression`
stores the records and compresses them into memory entries; a stored record keeps its fields in its
unit's meta (`Record.fields`, read back by `Record.from_unit`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from egodesk.core.words import cue_words
from egodesk.memory.llm_batches import ClipText, halves_of_failed
from egodesk.memory.store import Unit
from egodesk.perception import prompts
from egodesk.perception.llm import JSON_RETRIES, LLMError, chat_json
from egodesk.perception.llm_base import LLM

RECORDS_PER_CLIP = 3  # the schema's cap on records per clip (a small model can loop otherwise)
TOKENS_PER_CLIP = 64  # generation budget per clip in a batch
TOKENS_PER_SPOKEN_CLIP = 96  # a clip with speech: more records (who said what), each pointing at its line
SELF_WORDS = {"i", "me", "my", "myself", "wearer", "the wearer", "camera wearer", "the camera wearer"}
_TEXT_LIMITS = {"action": 40, "object": 60, "tool": 40, "location": 40}
SPEECH_CHARS = 200  # a quoted line is cut here: records and their entries stay short in the reasoner's context


@dataclass
class Record:
    clip_id: int
    start: float
    end: float
    persons: list[str]
    action: str
    object: str
    tool: str = ""
    location: str = ""
    speech: str = ""
    attributes: list[str] = field(default_factory=list)

    def sentence(self) -> str:
        """A readable sentence: "I take plate", "Tasha ask for salt: "Pass me the salt"" """
        words = [" and ".join(self.persons), self.action, self.object]
        if self.tool:
            words.append(f"with {self.tool}")
        if self.location:
            words.append(f"at {self.location}")
        text = " ".join(w for w in words if w)
        return f'{text}: "{self.speech}"' if self.speech else text

    @classmethod
    def from_unit(cls, unit: Unit) -> Record:
        """The record a stored unit holds: its times, and its fields from the unit's meta."""
        meta = unit.meta
        return cls(
            unit.clip_id,
            unit.start_ts,
            unit.end_ts,
            meta["persons"],
            meta["action"],
            meta["object"],
            meta["tool"],
            meta["location"],
            meta["speech"],
            meta["attributes"],
        )

    def fields(self) -> dict[str, Any]:
        return {
            "persons": self.persons,
            "action": self.action,
            "object": self.object,
            "tool": self.tool,
            "location": self.location,
            "speech": self.speech,
            "attributes": self.attributes,
        }


def record_schema(n_clips: int, speech_lines: int = 0) -> dict:
    """One record per item; `id` is an enum of the batch's entry numbers, `said` (only when the batch
    has speech) of the speech line numbers of its most talkative entry. Strings are capped when parsed,
    not in the schema: a bounded repetition in a llama.cpp grammar costs ~3.5x the sampling CPU (measured
    with llm-test on 6 epic-dev narrations, same reply)."""
    text = {"type": "string"}
    short_list = {"type": "array", "items": text, "maxItems": 4}
    item = {
        "type": "object",
        "properties": {
            "id": {"enum": list(range(1, n_clips + 1))},
            "persons": short_list,
            "action": text,
            "object": text,
            "tool": text,
            "location": text,
            "attributes": short_list,
        },
        "required": ["id", "action", "object"],
    }  # persons left out = the wearer alone (saves output tokens)
    if speech_lines:
        item["properties"]["said"] = {"enum": list(range(1, speech_lines + 1))}
    return {
        "type": "object",
        "properties": {"records": {"type": "array", "items": item, "maxItems": RECORDS_PER_CLIP * n_clips}},
        "required": ["records"],
    }


def record_messages(clips: list[ClipText], wearer: str) -> list[dict[str, str]]:
    entries = "\n".join(f"{i}. {clip.render(wearer, numbered=True)}" for i, clip in enumerate(clips, start=1))
    system, _ = record_head(wearer)
    return [system, {"role": "user", "content": prompts.render("records_user", entries=entries)}]


def record_head(wearer: str) -> list[dict[str, str]]:
    """What every records prompt starts with: its rules and example, kept evaluated by a local model
    (`LLM.keep_prefix`) so that neither a new footage nor the atomic builder in between costs them again."""
    return [
        {"role": "system", "content": prompts.render("records_system", wearer=wearer)},
        {"role": "user", "content": prompts.head("records_user")},
    ]


def _clean(value: Any, cap: int) -> str:
    return " ".join(str(value or "").split())[:cap].strip(" .,;")


def _persons(raw: Any, wearer: str) -> list[str]:
    """Names as given, with the wearer's self-references mapped to the wearer's name, deduplicated."""
    out: list[str] = []
    for name in raw if isinstance(raw, list) else []:
        name = _clean(name, 40)
        name = wearer if name.lower() in SELF_WORDS else name
        if name and name not in out:
            out.append(name)
    return out or [wearer]


def _said(number: Any, clip: ClipText) -> str:
    """The clip's transcript line a record points at, verbatim (capped); "" when it points at none."""
    if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= len(clip.speech):
        return _clean(clip.speech[number - 1], SPEECH_CHARS)
    return ""


def parse_records(data: Any, clips: list[ClipText], wearer: str) -> list[Record]:
    """Valid records from a reply, in entry order; drops items without an action and exact repeats."""
    items = data.get("records", []) if isinstance(data, dict) else []
    out: list[Record] = []
    seen: set[tuple] = set()
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("id"), int) or not 1 <= item["id"] <= len(clips):
            continue
        clip = clips[item["id"] - 1]
        values = {name: _clean(item.get(name), cap) for name, cap in _TEXT_LIMITS.items()}
        values["speech"] = _said(item.get("said"), clip)
        values["action"] = values["action"].lower()
        if not values["action"]:
            continue
        if _invented(values["object"], clip):
            continue
        raw_attributes = item.get("attributes")
        attributes = [a for a in (_clean(x, 40) for x in raw_attributes) if a] if isinstance(raw_attributes, list) else []
        record = Record(
            clip.clip_id, clip.start, clip.end, _persons(item.get("persons"), wearer), attributes=attributes, **values
        )
        key = (item["id"], tuple(record.persons), record.action, record.object.lower(), record.speech)
        if key not in seen:
            seen.add(key)
            out.append(record)
    order = {clip.clip_id: i for i, clip in enumerate(clips)}
    return sorted(out, key=lambda r: order[r.clip_id])  # stable: keeps each entry's own record order


def _invented(thing: str, clip: ClipText) -> bool:
    """Whether a record's object is none of the entry's own words: a small model copies the prompt's
    example into entries it cannot parse (LoCoMo's "Hey Mel!" became "Tasha ask for salt")."""
    words = cue_words(thing)
    return bool(words) and not words & cue_words(" ".join([clip.caption, *clip.speech, *clip.screen]))


def record_budget(clips: list[ClipText]) -> int:
    """Output tokens for a batch's records: more for clips with speech, whose records carry quotes
    (20 s of LoCoMo dialogue overflowed 64 tokens a clip; every overflow costs a whole generation)."""
    return 48 + sum(TOKENS_PER_SPOKEN_CLIP if clip.speech else TOKENS_PER_CLIP for clip in clips)


def extract_records(llm: LLM, clips: list[ClipText], wearer: str, failures: list[LLMError] | None = None) -> list[Record]:
    """Records of a batch of clips in one LLM call. A malformed reply of several clips is split into
    two halves at once: under the schema's grammar, a greedy reply is malformed when the token budget
    cut it off, and a sampled retry of the same batch runs into the same budget. A single clip gets
    the sampled retries; one that still fails yields no records, is logged and its error added to
    `failures`."""
    if not clips:
        return []
    llm.keep_prefix(record_head(wearer))
    try:
        schema = record_schema(len(clips), max(len(c.speech) for c in clips))
        data, _ = chat_json(
            llm,
            record_messages(clips, wearer),
            schema,
            max_tokens=record_budget(clips),
            retries=JSON_RETRIES if len(clips) == 1 else 0,
            keep_looped=True,
        )
        return parse_records(data, clips, wearer)
    except LLMError as exc:
        halves = halves_of_failed(clips, exc, "interaction records", failures)
        if halves is None:
            return []
        return [record for half in halves for record in extract_records(llm, half, wearer, failures)]
