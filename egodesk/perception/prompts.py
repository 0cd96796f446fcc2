"""Prompt templates: plain text files in `resources/prompts/` with `$placeholder` fields (string.Template:
the memory builders' templates hold JSON examples, whose braces must stay as written).

Kept out of code so wording can be tuned (and reviewed) without touching logic. A template is read once.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from string import Template

from egodesk.core.paths import resources_dir

# How a described caption brings in what was read on screen; reasoning.facts and the answerer find it by this.
VISIBLE_TEXT = "Visible text: "
# How a described caption quotes what was heard (the clip's transcript), up to its visible text if any.
HEARD = "I hear: "
HEARD_PART = re.compile(re.escape(HEARD) + r"(.+?)(?= " + re.escape(VISIBLE_TEXT) + "|$)")
_QUOTED = re.compile(r"'(.*)'(\.?)", re.S)
# How a described caption marks a guess from image labels below the sure score, and its sentences.
UNSURE = " (low confidence)."
UNSURE_SENTENCE = re.compile(r"[^.!?]*" + re.escape(UNSURE))


def unquoted(heard: str) -> tuple[str, str] | None:
    """What a caption's HEARD part says inside its quote marks, and the full stop after them (the
    captioner ends a quote that ends no sentence with one); None when it is not quoted."""
    m = _QUOTED.fullmatch(heard.strip())
    return (m[1], m[2]) if m else None


class PromptError(KeyError):
    """A template is missing or a placeholder got no value."""


def prompts_dir() -> Path:
    return resources_dir() / "prompts"


@cache
def load(name: str) -> str:
    path = prompts_dir() / f"{name}.txt"
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise PromptError(f"prompt template {path} cannot be read ({exc})") from exc


def head(name: str) -> str:
    """The template's fixed opening, before its first placeholder: what every prompt from it starts with."""
    text = load(name)
    found = Template.pattern.search(text)
    return text[: found.start()] if found else text


def render(name: str, **values: object) -> str:
    """The template with every placeholder filled; a placeholder without a value is an error."""
    try:
        return Template(load(name)).substitute(values)
    except KeyError as exc:
        raise PromptError(f"prompt template '{name}' needs a value for {exc}") from exc
