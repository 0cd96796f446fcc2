"""The test day's answer judge: an open answer is right when it contains one of the question's accepted
answers, compared after normalising both sides the same way.

Normalising: lower case, accents dropped, number words become digits ("forty two" -> 42, "twice" -> 2,
"twelve thousand" -> 12000), thousands separators dropped (12,000 -> 12000), hour zeros and seconds dropped
(08:24 -> 8:24, 18:05:00 -> 18:05), letters and digits split apart (what OCR writes as "R00M214" or "FRIDAY9:30"),
punctuation other than a time's colon or a price's point becomes a space. An accepted answer then
has to appear as whole words, so "2" is not found in "12" nor "son" in "season". An accepted entry
that is a list needs all of its parts ("priya" and "tom").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

_UNITS = {
    w: n
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen".split()
    )
}
_TENS = {w: 10 * n for n, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)}
_TIMES = {"once": 1, "twice": 2, "thrice": 3}
_SCALES = {"hundred": 100, "thousand": 1000}


def _numbers(words: list[str]) -> list[str]:
    """Runs of number words become one number each ("one hundred and eighty" -> "180"); a run ends
    where a new number starts rather than continues ("nineteen sixty" stays two numbers)."""
    out: list[str] = []
    total, current, active = 0, 0, False

    def flush() -> None:
        nonlocal total, current, active
        if active:
            out.append(str(total + current))
        total, current, active = 0, 0, False

    for i, word in enumerate(words):
        if word in _TIMES:
            flush()
            out.append(str(_TIMES[word]))
        elif word in _UNITS or word in _TENS:
            value = _UNITS.get(word, _TENS.get(word, 0))
            if active and (current % 100 if word in _TENS or value >= 10 else current % 10):
                flush()  # "forty two" continues; "nineteen sixty" or "two three" do not
            current += value
            active = True
        elif word in _SCALES and active:
            if word == "hundred":
                current *= 100
            else:
                total, current = (total + current) * 1000, 0
        elif (
            word == "and"
            and active
            and (total or current)
            and current % 100 == 0
            and i + 1 < len(words)
            and (words[i + 1] in _UNITS or words[i + 1] in _TENS)
        ):
            continue  # "one hundred and eighty", not "forty two and twelve"
        else:
            flush()
            out.append(word)
    flush()
    return out


def normalize(text: str) -> list[str]:
    """The words of `text` as the judge compares them."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 12,000
    text = re.sub(r"(?<=[a-z])(?=\d)|(?<=\d)(?=[a-z])", " ", text)  # R00M214, 9:30am
    text = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text)  # forty-two
    text = re.sub(r"(?<!\d)[:.](?!\d)|[:.](?=\D)|[:.]$", " ", text)  # keep 8:24 and 3.50 only
    text = re.sub(r"[^a-z0-9:. ]", " ", text)
    words = [re.sub(r"^0(\d):", r"\1:", w) for w in text.split()]  # 08:24 -> 8:24
    words = [re.sub(r"^(\d{1,2}:\d{2}):\d{2}$", r"\1", w) for w in words]  # 18:05:00 -> 18:05
    return _numbers(words)


def _contains(words: Sequence[str], phrase: Sequence[str]) -> bool:
    n = len(phrase)
    return n > 0 and any(list(words[i : i + n]) == list(phrase) for i in range(len(words) - n + 1))


def is_right(answer: str, accept: Iterable[str | Sequence[str]]) -> bool:
    """Whether `answer` states one of the accepted answers (a list entry: all of its parts)."""
    words = normalize(answer)
    for entry in accept:
        parts = [entry] if isinstance(entry, str) else list(entry)
        if parts and all(_contains(words, normalize(part)) for part in parts):
            return True
    return False
