"""Broken text tracks (SRT, WebVTT, memory.jsonl) through `Library.add`: the good lines are imported,
each bad line is reported with its line number, nothing stored is lost, and importing the same file
again adds nothing."""

from __future__ import annotations

import codecs
import json
import re

import pytest

from egodesk.core.timeutil import parse_iso
from egodesk.pipeline.library import Library
from tests.badinput.support import assert_nothing_lost, egodesk, snapshot

pytestmark = pytest.mark.badinput

START = parse_iso("2024-05-01T09:00:00")

SRT = """1
00:00:01,000 --> 00:00:03,500
Hello there.

2
00:00:04,000 --> 00:0x:06,000
A cue with a broken end time.

3
00:00:07,000 --> 00:00:08,000

4
00:00:09,000 --> 00:00:08,000
This one ends before it starts.

just a line without timing

6
00:00:10,000 --> 00:00:12
Ana: A cue without milliseconds still counts.

7
00:01:75,000 --> 00:01:80,000
Seventy-five seconds is no time.

8
00:00:13,000 --> 00:00:14,000
Zoë sagt: schön.
"""
# (line number, what the note says) of each problem above; the last cue is written in Windows-1252.
SRT_PROBLEMS = [
    (6, "bad timestamp '00:0x:06,000'"),
    (10, "without text"),
    (13, "ends before it starts"),
    (16, "without a timing line"),
    (23, "bad timestamp '00:01:75,000'"),
    (28, "not UTF-8"),
]
SRT_GOOD = ["Hello there.", "Ana: A cue without milliseconds still counts.", "Zoë sagt: schön."]

VTT = """WEBVTT - a header line

NOTE a comment block,
which is not a cue

00:01.000 --> 00:03.000 align:start position:10%
<v Ana>First line.</v>

00:00:04.000 --> 00:00:05.000
<b>Second</b> line.

00:61.000 --> 00:62.000
Bad minutes.

00:00:06.000 --> 00:00:07.000
"""
VTT_PROBLEMS = [(12, "bad timestamp '00:61.000'"), (15, "without text")]
VTT_GOOD = ["First line.", "Second line."]


def jsonl_lines() -> list[bytes]:
    good = {
        "source": "kitchen",
        "start": "2024-02-02T10:00:00",
        "end": "2024-02-02T10:00:05",
        "kind": "narration",
        "text": "I open the door.",
    }
    rows = [
        codecs.BOM_UTF8 + json.dumps(good).encode(),  # a BOM before the first line
        b"{broken json",
        json.dumps({**good, "text": ""}).encode(),
        json.dumps({**good, "text": None}).encode(),
        json.dumps({**good, "start": 1706868000}).encode(),
        json.dumps({**good, "kind": "smell"}).encode(),
        json.dumps({**good, "end": "2024-02-02T09:00:00"}).encode(),
        json.dumps({k: v for k, v in good.items() if k != "source"}).encode(),
        b"[1, 2, 3]",
        b"",
        json.dumps(
            {**good, "start": "2024-02-02T10:01:00", "end": "2024-02-02T10:01:05", "text": "I take the café keys."}
        ).encode("utf-8"),
        json.dumps(
            {**good, "start": "2024-02-02T10:02:00", "end": "2024-02-02T10:02:05", "text": "I pay 5 €."}, ensure_ascii=False
        ).encode("cp1252"),
    ]
    return rows


JSONL_PROBLEMS = [
    (2, "invalid JSON"),
    (3, "no text"),
    (4, "no text"),
    (5, "bad time"),
    (6, "unknown kind 'smell'"),
    (7, "end before start"),
    (8, "missing source"),
    (9, "not a JSON object"),
    (12, "not UTF-8"),
]
JSONL_GOOD = ["I open the door.", "I take the café keys.", "I pay 5 €."]


@pytest.fixture
def library(tmp_path) -> Library:
    """A library that already holds one text footage, so that "nothing lost" has something to lose."""
    lib = Library(tmp_path / "library")
    first = tmp_path / "first.srt"
    first.write_text("1\n00:00:01,000 --> 00:00:02,000\nAlready here.\n", encoding="utf-8")
    assert lib.add([first], start_ts=START - 3600).added == [1]
    yield lib
    lib.close()


def texts(library: Library, footage_id: int) -> list[str]:
    return [c.caption or " ".join(t[3] for t in c.transcript) for c in library.clips(footage_id)]


def noted_lines(notes: list[str], name: str) -> list[int]:
    return [int(m[1]) for note in notes if (m := re.match(re.escape(name) + r":(\d+): ", note))]


def check_import(library: Library, path, expected_problems, good: list[str]) -> None:
    before = snapshot(library.store)
    report = library.add([path], start_ts=START)
    assert report.errors == [] and len(report.added) == 1
    notes = sorted(report.notes, key=lambda note: noted_lines([note], path.name))
    assert noted_lines(notes, path.name) == [line for line, _ in expected_problems], notes
    for note, (_, words) in zip(notes, expected_problems):
        assert words in note, note
    assert texts(library, report.added[0]) == good
    after = snapshot(library.store)
    assert_nothing_lost(before, after)
    again = library.add([path], start_ts=START)  # the same file again: recognised, nothing added
    assert again.added == [] and again.existing == report.added and snapshot(library.store) == after


def test_srt_with_broken_cues(library, tmp_path):
    path = tmp_path / "talk.srt"
    last = SRT.index("Zoë")  # Windows line ends, and the last line in Windows-1252
    path.write_bytes(SRT[:last].encode("utf-8").replace(b"\n", b"\r\n") + SRT[last:].replace("\n", "\r\n").encode("cp1252"))
    check_import(library, path, SRT_PROBLEMS, SRT_GOOD)
    [segment] = library.clips(library.footage()[-1].id)[1].transcript
    assert segment[2] == "Ana" and segment[0] == START + 10.0 and segment[1] == START + 12.0


def test_vtt_with_broken_cues(library, tmp_path):
    path = tmp_path / "talk.vtt"
    path.write_text(VTT, encoding="utf-8-sig")  # with a BOM
    check_import(library, path, VTT_PROBLEMS, VTT_GOOD)


def test_utf16_subtitles_with_a_bom(library, tmp_path):
    path = tmp_path / "windows.srt"
    path.write_text("1\r\n00:00:01,000 --> 00:00:02,000\r\nÜberall Grüße, 你好.\r\n", encoding="utf-16")
    check_import(library, path, [], ["Überall Grüße, 你好."])


def test_jsonl_with_broken_lines(library, tmp_path):
    path = tmp_path / "memory.jsonl"
    path.write_bytes(b"\n".join(jsonl_lines()) + b"\n")
    check_import(library, path, JSONL_PROBLEMS, JSONL_GOOD)


@pytest.mark.parametrize(
    "name, content, reason",
    [
        ("empty.srt", b"", "no subtitle cues found (empty file)"),
        ("blank.vtt", b"\n  \n", "no subtitle cues found (empty file)"),
        ("empty.jsonl", b"", "no valid entries (empty file)"),
        ("header-only.vtt", b"WEBVTT\n\nNOTE nothing else\n", "no subtitle cues found (empty file)"),
        (
            "all-broken.srt",
            b"1\n00:00:0x,000 --> 00:00:02,000\nHi\n",
            "no subtitle cues found (1 problem(s): all-broken.srt:2: skipped a cue (bad timestamp",
        ),
        ("all-broken.jsonl", b"{nope\n[]\n", "no valid entries (2 problem(s): all-broken.jsonl:1: skipped (invalid JSON"),
        ("binary.srt", b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)), "not a text file (it contains binary data"),
        ("binary.jsonl", b"\x00\x01\x02{}", "not a text file (it contains binary data"),
    ],
)
def test_unusable_text_tracks_are_refused_with_a_reason(library, tmp_path, name, content, reason):
    path = tmp_path / name
    path.write_bytes(content)
    before = snapshot(library.store)
    report = library.add([path], start_ts=START)
    assert report.added == [] and report.errors == [(str(path), report.errors[0][1])]
    assert report.errors[0][1].startswith(reason), report.errors[0][1]
    assert str(path) not in report.errors[0][1]  # the path is said once, by whoever prints it
    assert snapshot(library.store) == before


def test_cli_reports_each_bad_line(tmp_path, monkeypatch):
    """`egodesk import` prints a note per bad line (file:line: reason) and imports the rest."""
    monkeypatch.setenv("EGODESK_HOME", str(tmp_path / "library"))
    path = tmp_path / "Notizen über den Tag.vtt"
    path.write_text(VTT, encoding="utf-8")
    empty = tmp_path / "leer.srt"
    empty.write_text("")
    result = egodesk("import", str(path), str(empty), "--wait")
    assert "Traceback" not in result.stderr and result.returncode == 1, result.stderr
    for line, words in VTT_PROBLEMS:
        assert re.search(rf"note: {re.escape(path.name)}:{line}: .*{re.escape(words)}", result.stderr), result.stderr
    assert f"error: {empty}: no subtitle cues found (empty file)" in result.stderr
    assert "added 1 footage, 0 already in the library, 1 error(s)" in result.stderr
