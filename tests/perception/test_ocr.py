"""On-screen text with RapidOCR (models bundled in the package)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from egodesk.core.settings import Settings
from egodesk.perception.ocr import TEXT_BREAK, TextReader, make_text_reader, reading_order, screen_texts, text_blocks, tidy


@pytest.fixture(scope="module")
def reader() -> TextReader:
    return TextReader(threads=2)


def sign(lines: list[tuple[str, tuple[int, int]]], size=(480, 848)) -> np.ndarray:
    image = np.zeros((*size, 3), np.uint8)
    for text, origin in lines:
        cv2.putText(image, text, origin, cv2.FONT_HERSHEY_SIMPLEX, 3, (255, 255, 255), 6)
    return image


def test_reads_two_signs_in_reading_order(reader):
    assert reader._engine is None  # nothing loads until the first frame
    text = reader.read(sign([("Platform 4", (60, 350)), ("EXIT", (60, 150))]))
    texts = text.split(TEXT_BREAK)
    assert texts[0] == "EXIT" and texts[1].replace(" ", "") == "Platform4", text


def test_reads_a_notes_lines_as_one_text(reader):
    """Lines one under another in letters of one size are one note: what it says is quoted whole."""
    text = reader.read(sign([("BUY MILK", (60, 150)), ("AND EGGS", (60, 250)), ("EXIT", (560, 440))], size=(480, 848)))
    assert text.split(TEXT_BREAK) == ["BUY MILK / AND EGGS", "EXIT"], text


def test_large_frames_and_blank_frames(reader):
    big = cv2.resize(sign([("EXIT", (60, 150))]), (1920, 1080))
    assert reader.read(big) == "EXIT"
    assert reader.read(np.zeros((480, 848, 3), np.uint8)) == ""


def _box(x, y, w=100, h=40):
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float32)


def test_reading_order_rows_then_columns():
    boxes = [(_box(400, 105), "right"), (_box(10, 300), "below"), (_box(20, 100), "left"), (_box(10, 10), "top")]
    assert [t for _, t in reading_order(boxes)] == ["top", "left", "right", "below"]
    assert reading_order([]) == []


def test_text_blocks_join_lines_one_under_another_of_one_size():
    note = [(_box(100, 100, w=200), "BUY MILK"), (_box(110, 160, w=180), "AND EGGS")]
    apart = [(_box(100, 300, w=200), "EXIT")]  # a line height and more below
    beside = [(_box(600, 100), "OPEN")]  # on the note's first row, far to its right
    small = [(_box(100, 205, w=150, h=15), "printed in 2026")]  # right under it, in far smaller letters
    assert text_blocks(note + apart + beside + small) == [["BUY MILK", "AND EGGS"], ["OPEN"], ["printed in 2026"], ["EXIT"]]
    assert text_blocks([]) == []


def test_screen_texts_are_each_frames_texts_once():
    assert screen_texts(["BUY MILK / AND EGGS\nEXIT", "", "buy milk / and eggs", "EXIT\nROOM 214"]) == [
        "BUY MILK / AND EGGS",
        "EXIT",
        "ROOM 214",
    ]


def test_reads_run_together_sign_lettering_as_words(reader):
    text = reader.read(sign([("PROJECTATLAS", (20, 200))], size=(480, 1000)))
    assert text.upper() == "PROJECT ATLAS", text


@pytest.mark.parametrize(
    ("read", "tidied"),
    [
        ("PROJECTATLAS", "PROJECT ATLAS"),
        ("BUY MILK / ANDEGGS", "BUY MILK / AND EGGS"),
        ("NEXT08:24", "NEXT 08:24"),
        ("BUS42CITYCENTRE", "BUS 42 CITY CENTRE"),
        ("DEADLINE:FRIDAY4PM", "DEADLINE: FRIDAY 4PM"),
        ("R00M214", "ROOM 214"),
        ("RO0M214", "ROOM 214"),
        ("OPEN10-18", "OPEN 10-18"),
        # left alone: real words, short unit/ordinal suffixes, names the word list does not know
        ("RECYCLING DAY", "RECYCLING DAY"),
        ("4PM 3RD 180C 45 MIN", "4PM 3RD 180C 45 MIN"),
        ("Nomvula Thandiwe", "Nomvula Thandiwe"),
        ("Cappuccino 3.50", "Cappuccino 3.50"),
        ("", ""),
    ],
)
def test_tidy_separates_run_together_words_and_numbers(read, tidied):
    assert tidy(read) == tidied


def test_factory_respects_the_setting():
    assert make_text_reader(Settings(ocr_enabled=False)) is None
    assert isinstance(make_text_reader(Settings(ocr_enabled=True)), TextReader)
