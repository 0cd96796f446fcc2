"""Words that sound or are spelled alike: how a question's word still meets what speech recognition
wrote for it ("motorcycle" heard as "Mogor Cycle", "appointment" as "pointment", "Anika" as "Annika").

Three tests, each cheap and deterministic, any of which makes two words alike:
- the same sound key (`sound_key`: a Metaphone-style code, voiced and voiceless consonants merged, as
  a recogniser confuses them), for words whose keys hold at least four sounds (three-sound keys collide
  across unrelated words: "park" and "brake" are both PRK);
- a small edit distance against the longer word (`spelled_alike`), for words of six letters or more
  ("horse" and "house" are one edit apart and different words);
- one word the other's ending or start, covering most of it ("pointment" in "appointment").
Two neighbouring heard words also count joined ("mogor cycle" -> "mogorcycle"), since a recogniser
splits a word it does not know into words it does.

Short words are matched exactly only: "bed" ~ "bad" is as likely a different word as a mishearing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

MIN_KEY = 4  # sounds a key needs to be compared: shorter keys collide across unrelated words
MIN_SPELLED = 5  # letters both words need for the edit-distance and part tests
MIN_EDITED = 6  # letters the longer word needs for the edit-distance test
SPELLED_SIMILARITY = 0.8  # 1 - edits / letters of the longer word
PART_SHARE = 0.75  # a word that is another's start or end must cover this share of it

# Letter groups a Metaphone-style key rewrites, longest first; then single letters.
_DIGRAPHS = (
    ("tch", "X"),
    ("sch", "SK"),
    ("ph", "F"),
    ("sh", "X"),
    ("ch", "X"),
    ("th", "0"),
    ("gh", ""),
    ("ck", "K"),
    ("wh", "W"),
    ("wr", "R"),
    ("kn", "N"),
    ("dg", "J"),
    ("qu", "KW"),
)
# Voiced and voiceless pairs merged (b/p, d/t, g/k/c/q, v/f, z/s, j), vowels dropped after the first letter.
_LETTERS = {
    "b": "P",
    "p": "P",
    "d": "T",
    "t": "T",
    "g": "K",
    "k": "K",
    "q": "K",
    "c": "K",
    "x": "KS",
    "v": "F",
    "f": "F",
    "z": "S",
    "s": "S",
    "j": "J",
    "l": "L",
    "m": "M",
    "n": "N",
    "r": "R",
    "w": "",
    "h": "",
    "y": "",
}


@functools.lru_cache(maxsize=1 << 16)
def sound_key(word: str) -> str:
    """A word's consonant sounds ("motorcycle" -> "MTRSKL", "mogor cycle" joined -> "MKRSKL"); a
    leading vowel is kept as 'A' so "ant" and "nt" differ."""
    w = re.sub(r"[^a-z]", "", word.lower())
    if not w:
        return ""
    w = re.sub(r"c(?=[eiy])", "s", w)
    w = re.sub(r"g(?=[eiy])", "j", w)
    key = "A" if w[0] in "aeiou" else ""
    for group, sound in _DIGRAPHS:
        w = w.replace(group, sound)  # upper case: already a sound
    for letter in w:
        sound = letter if letter.isupper() or letter == "0" else _LETTERS.get(letter, "")
        if sound and not key.endswith(sound):
            key += sound
    return key


def edit_distance(a: Sequence, b: Sequence) -> int:
    """Substitutions, deletions and insertions that turn `a` into `b` (Levenshtein), over letters or words."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


@functools.lru_cache(maxsize=1 << 18)
def spelled_alike(a: str, b: str) -> bool:
    """Few edits apart (the longer >= MIN_EDITED letters), or one the other's start or end covering most
    of it (both >= MIN_SPELLED letters)."""
    if min(len(a), len(b)) < MIN_SPELLED:
        return False
    short, long = sorted((a, b), key=len)
    if len(short) >= PART_SHARE * len(long) and (long.startswith(short) or long.endswith(short)):
        return True
    if len(long) < MIN_EDITED or len(short) < SPELLED_SIMILARITY * len(long):  # the distance is at least the length difference
        return False
    return 1 - edit_distance(a, b) / len(long) >= SPELLED_SIMILARITY


@functools.lru_cache(maxsize=1 << 18)
def alike(a: str, b: str) -> bool:
    """Whether two lower-case words are the same word, sound alike or are spelled alike."""
    if a == b:
        return True
    key_a, key_b = sound_key(a), sound_key(b)
    if len(key_a) >= MIN_KEY and key_a == key_b:
        return True
    return spelled_alike(a, b)


def find_alike(word: str, heard: Iterable[str]) -> str | None:
    """The first of `heard` (lower-case words) that is `word` or sounds or is spelled alike; None when
    none is."""
    word = word.lower()
    return next((h for h in heard if alike(word, h)), None)
