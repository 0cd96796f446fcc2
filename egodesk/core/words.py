"""English word lists and a light lemmatiser: verbs an egocentric question asks about, stop words, and
how much of an event's words a text holds. Question analysis and the strategies match cues with them;
memory building checks with them which clip a statement repeats the words of.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

# Verbs an egocentric question asks about, with irregular past forms; regular inflections are
# stripped by `lemma`.
IRREGULAR = {
    "went": "go",
    "gone": "go",
    "took": "take",
    "taken": "take",
    "ate": "eat",
    "eaten": "eat",
    "drank": "drink",
    "saw": "see",
    "seen": "see",
    "made": "make",
    "bought": "buy",
    "left": "leave",
    "gave": "give",
    "given": "give",
    "got": "get",
    "told": "tell",
    "said": "say",
    "met": "meet",
    "ran": "run",
    "wrote": "write",
    "found": "find",
    "brought": "bring",
    "thought": "think",
    "came": "come",
    "did": "do",
    "done": "do",
    "had": "have",
    "has": "have",
    "was": "be",
    "were": "be",
    "is": "be",
    "are": "be",
    "put": "put",
    "cut": "cut",
    "threw": "throw",
    "thrown": "throw",
    "held": "hold",
    "spoke": "speak",
    "spoken": "speak",
    "began": "begin",
    "won": "win",
    "lost": "lose",
    "sold": "sell",
    "built": "build",
    "felt": "feel",
    "kept": "keep",
    "sat": "sit",
    "stood": "stand",
    "taught": "teach",
    "wore": "wear",
    "paid": "pay",
    "drove": "drive",
    "flew": "fly",
    "read": "read",
    "heard": "hear",
    "set": "set",
    "let": "let",
    "shut": "shut",
    "fell": "fall",
    "hid": "hide",
    "hidden": "hide",
    "chose": "choose",
    "forgot": "forget",
}
VERBS = set(IRREGULAR.values()) | {
    "open",
    "close",
    "wash",
    "rinse",
    "dry",
    "wipe",
    "clean",
    "pour",
    "fill",
    "empty",
    "stir",
    "mix",
    "fry",
    "boil",
    "cook",
    "bake",
    "peel",
    "chop",
    "slice",
    "grate",
    "squeeze",
    "turn",
    "switch",
    "check",
    "look",
    "move",
    "place",
    "pick",
    "drop",
    "grab",
    "hand",
    "pass",
    "carry",
    "push",
    "pull",
    "press",
    "fold",
    "unfold",
    "hang",
    "use",
    "play",
    "watch",
    "call",
    "text",
    "talk",
    "ask",
    "reply",
    "answer",
    "visit",
    "start",
    "finish",
    "stop",
    "try",
    "paint",
    "draw",
    "sing",
    "dance",
    "walk",
    "enter",
    "exit",
    "leave",
    "arrive",
    "return",
    "adopt",
    "join",
    "attend",
    "plan",
    "decide",
    "learn",
    "study",
    "work",
    "help",
    "share",
    "show",
    "send",
    "receive",
    "order",
    "shop",
    "sign",
    "fix",
    "repair",
    "store",
    "insert",
    "remove",
    "scoop",
    "spread",
    "shake",
    "season",
    "taste",
    "serve",
    "throw",
    "lock",
    "unlock",
    "plug",
    "unplug",
    "charge",
    "lift",
    "lower",
    "flip",
    "roll",
    "knead",
    "measure",
    "weigh",
    "scrape",
    "sprinkle",
    "crack",
    "whisk",
    "drain",
    "soak",
    "heat",
    "warm",
    "cool",
    "freeze",
    "feed",
    "water",
    "sweep",
    "mop",
    "vacuum",
    "iron",
    "tie",
    "zip",
    "wear",
    "dress",
    "brush",
    "comb",
    "shave",
    "run",
    "swim",
    "hike",
    "travel",
    "camp",
    "volunteer",
    "celebrate",
    "lose",
    "win",
    "buy",
    "sell",
    "rent",
    "borrow",
    "lend",
    "write",
    "read",
    "search",
    "find",
    "hide",
    "continue",
    "suggest",
    "skip",
    "happen",
    "recommend",
    "mention",
    "like",
    "love",
    "want",
    "need",
    "feel",
    "discuss",
    "explain",
    "agree",
    "laugh",
    "smile",
    "wait",
    "sleep",
    "wake",
    "sit",
    "stand",
    "eat",
    "drink",
    "cry",
    "meet",
}
STOPWORDS = set(
    """a an the and or but if then than so of to in on at by for with from into onto off out up down over under
about as is are was were be been being do does did done have has had having i me my mine we us our you your he him his
she her hers they them their it its this that these those there here what which who whom whose when where why how
will would shall should can could may might must not no yes any some all each every other another such same own just
also very too more most much many few lot lots thing things time times something anything ever again did this one
kind sort type way""".split()
)


@functools.lru_cache(maxsize=1 << 16)  # pure, and a library's vocabulary is small
def lemma(word: str) -> str:
    """A light lemmatiser for matching cues: a possessive's 's dropped ("Tom's" is Tom), irregular verbs,
    then -ies/-ing/-ed/-es/-s stripped."""
    w = word.lower().removesuffix("'s").strip("'")
    if w in IRREGULAR:
        return IRREGULAR[w]
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ied", "y"), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            stem = w[: -len(suffix)] + repl
            if suffix in ("ing", "ed") and len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
                stem = stem[:-1]  # stopped -> stop, running -> run
            if suffix == "es" and not stem.endswith(("sh", "ch", "x", "s", "z", "o")):
                stem = w[:-1]  # "uses" -> "use", "boxes" -> "box"
            if suffix in ("ing", "ed") and stem not in VERBS and stem + "e" in VERBS:
                stem += "e"  # wiping -> wipe, placed -> place
            return stem
    return w


# Words that carry no cue; particles ("on", "off", "down") are kept: "turn on" is not "turn off".
_CUE_STOP = {
    "i",
    "a",
    "an",
    "the",
    "this",
    "that",
    "these",
    "those",
    "my",
    "me",
    "mine",
    "we",
    "us",
    "our",
    "you",
    "your",
    "to",
    "of",
    "and",
    "or",
    "it",
    "its",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "do",
    "did",
    "does",
}
MIN_COVERAGE = 0.5  # share of an event's words a unit must hold to count as an occurrence of it


@functools.lru_cache(maxsize=1 << 16)  # a question checks every unit of its window: the same texts, question after question
def cue_words(text: str) -> frozenset[str]:
    """The lemmatised content words of a phrase, for matching an event's occurrences."""
    return frozenset({lemma(w) for w in re.findall(r"[a-z][a-z'-]*", text.lower())} - _CUE_STOP)


def cue_coverage(cues: frozenset[str], text: str) -> float:
    """Share of the cue words `text` holds (0 without cues)."""
    return len(cues & cue_words(text)) / len(cues) if cues else 0.0


# A recognised word that continues the one before it: the recogniser splits "12,000" into "12" and ",000",
# "o'clock" into "o" and "'clock", "non-stop" into "non" and "-stop" (its own spacing is lost when the
# words are stripped); a lone "%" belongs to its number.
_CONTINUES = re.compile(r"[,.'’%-](?=\w)|%$")


def spoken_text(words: Iterable[str]) -> str:
    """Recognised words as one line, each continuing piece joined to the word before it without a space
    ("12" ",000" -> "12,000", not "12 ,000": a search for the number would not find it)."""
    out = ""
    for word in (w.strip() for w in words):
        if word:
            out += word if not out or _CONTINUES.match(word) else " " + word
    return out
