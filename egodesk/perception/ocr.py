"""On-screen text (signs, screens, labels) from a frame, with RapidOCR (PP-OCR models on onnxruntime).

The models ship inside the `rapidocr-onnxruntime` package, so nothing is fetched. The engine is built
on first use: constructing a reader is free, which keeps settings and tests cheap when OCR is off.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

import cv2
import numpy as np

if TYPE_CHECKING:
    from egodesk.core.settings import Settings

# A frame's texts (a note, a sign, a screen) stay apart, one per line; the lines of one text are joined
# as a quoted verse's are: "BUY MILK / AND EGGS" is one note, so what it says is read (and quoted) whole.
TEXT_BREAK = "\n"
LINE_BREAK = " / "
# A line continues the text just above it when the gap between them is under this many of its letters'
# heights (a note's line spacing is about half of one; two signs apart are further), it overlaps that
# text's last line sideways and its letters are about as tall (at most this ratio).
BLOCK_GAP = 1.0
BLOCK_SIZE_RATIO = 1.5

# Frames are shrunk to this longer side first, and the detector then works at the frame's own scale
# (its stock setting enlarges every frame to a 736 px shorter side: 2-3x slower on 480p footage and
# no better on text a person could read from the video).
MAX_SIDE = 960
DET_MIN_SIDE = 480


class TextReader:
    def __init__(self, min_confidence: float = 0.5, threads: int = 2):
        self.min_confidence = min_confidence
        self.threads = threads
        self._engine = None

    def _load(self):
        if self._engine is None:
            from rapidocr_onnxruntime import RapidOCR

            # Thread counts are global options: RapidOCR copies them over any per-model ones.
            self._engine = RapidOCR(
                text_score=self.min_confidence,
                det_limit_type="min",
                det_limit_side_len=DET_MIN_SIDE,
                intra_op_num_threads=self.threads,
                inter_op_num_threads=1,
            )
        return self._engine

    def read(self, frame: np.ndarray) -> str:
        """The texts found in a BGR frame (`text_blocks`), in reading order: each its lines joined with
        LINE_BREAK, the texts with TEXT_BREAK; "" when none."""
        h, w = frame.shape[:2]
        scale = MAX_SIDE / max(h, w)
        if scale < 1:
            frame = cv2.resize(frame, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
        result, _ = self._load()(frame)
        boxes = [
            (np.asarray(box, dtype=np.float32), text.strip())
            for box, text, score in (result or ())
            if score >= self.min_confidence and text.strip()
        ]
        return TEXT_BREAK.join(LINE_BREAK.join(tidy(text) for text in block) for block in text_blocks(boxes))


def screen_texts(frames: Iterable[str]) -> list[str]:
    """The distinct texts (case-insensitive) in frames' `TextReader.read` results, first seen first."""
    seen: dict[str, str] = {}
    for read in frames:
        for text in read.split(TEXT_BREAK):
            text = " ".join(text.split())
            if text:
                seen.setdefault(text.casefold(), text)
    return list(seen.values())


# The recogniser often drops the narrow gaps of sign lettering ("PROJECTATLAS", "NEXT08:24") and reads
# O as 0 between letters ("R00M"). Words run together are invisible to keyword search and confuse the
# answerer, so they are separated here, once, where the text is made.
_ZERO_AS_O = re.compile(r"(?<=[A-Za-z])0+(?=[A-Za-z])")
_COLON_BEFORE_WORD = re.compile(r"(?<=[A-Za-z]):(?=[A-Za-z])")
_WORD_THEN_NUMBER = re.compile(r"(?<=[A-Za-z]{3})(?=\d)")
_NUMBER_THEN_WORD = re.compile(r"(?<=\d)(?=[A-Za-z]{3})")  # "42CITY", not "4PM" / "3RD"
_LETTER_RUN = re.compile(r"[A-Za-z]{6,}")
# A split is kept only when every piece is a plausible word: pieces of two letters must be one of these,
# so an unknown name ("Nomvula" -> "Nom vu la") stays whole.
_SHORT_WORDS = frozenset("a i am an as at be by do go he if in is it me my no of on or so to up us we".split())


def tidy(text: str) -> str:
    """One recognised text line with run-together words and numbers separated."""
    text = _ZERO_AS_O.sub(lambda m: "O" * len(m.group()), text)
    text = _COLON_BEFORE_WORD.sub(": ", text)
    text = _NUMBER_THEN_WORD.sub(" ", _WORD_THEN_NUMBER.sub(" ", text))
    return _LETTER_RUN.sub(lambda m: _split_words(m.group()), text)


@cache
def _split_words(run: str) -> str:
    import wordninja  # loads a 126k-word frequency list (~0.1 s), only once text is found

    pieces = wordninja.split(run)
    plausible = all(len(p) >= 3 or p.lower() in _SHORT_WORDS for p in pieces)
    return " ".join(pieces) if plausible and "".join(pieces) == run else run


def reading_order(boxes: list[tuple[np.ndarray, str]]) -> list[tuple[np.ndarray, str]]:
    """Top-to-bottom rows, left-to-right within a row. Boxes whose vertical centres lie within half a
    line height of a row's first box belong to that row (the detector's own order is not reliable)."""
    rows: list[list[tuple[np.ndarray, str]]] = []
    for item in sorted(boxes, key=lambda b: b[0][:, 1].mean()):
        box = item[0]
        centre, height = box[:, 1].mean(), np.ptp(box[:, 1])
        if rows:
            first = rows[-1][0][0]
            if abs(centre - first[:, 1].mean()) <= max(height, np.ptp(first[:, 1])) / 2:
                rows[-1].append(item)
                continue
        rows.append([item])
    return [item for row in rows for item in sorted(row, key=lambda b: b[0][:, 0].min())]


def text_blocks(boxes: list[tuple[np.ndarray, str]]) -> list[list[str]]:
    """The lines of each text in the frame, texts in the reading order of their first lines: a line
    joins the text whose last line lies just above it (`BLOCK_GAP`), overlaps it sideways and has letters
    of about its size; others (a second sign, a line beside it) start a text of their own."""
    blocks: list[list[tuple[np.ndarray, str]]] = []
    for box, text in reading_order(boxes):
        height = np.ptp(box[:, 1])
        for block in blocks:
            last = block[-1][0]
            last_height = np.ptp(last[:, 1])
            small, large = sorted((height, last_height))
            gap = box[:, 1].min() - last[:, 1].max()
            overlap = min(box[:, 0].max(), last[:, 0].max()) - max(box[:, 0].min(), last[:, 0].min())
            if -small / 2 < gap <= BLOCK_GAP * small and overlap > 0 and large <= BLOCK_SIZE_RATIO * small:
                block.append((box, text))
                break
        else:
            blocks.append([(box, text)])
    return [[text for _, text in block] for block in blocks]


def make_text_reader(settings: Settings) -> TextReader | None:
    """None when the user turned on-screen text off."""
    return TextReader(threads=settings.threads) if settings.ocr_enabled else None
