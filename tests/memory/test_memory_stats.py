"""Memory statistics per footage and unit kind, the record memory's growth, and `egodesk memory stats`."""

from __future__ import annotations

import json
import re

import pytest

from egodesk.cli import main
from egodesk.core.settings import Settings
from egodesk.memory.atomic import build_atomic
from egodesk.memory.indices import IndexManager
from egodesk.memory.parent_child import build_parent_child
from egodesk.memory.record_compression import build_records
from egodesk.memory.stats import footage_summary, memory_stats
from egodesk.memory.visual import build_visual
from egodesk.pipeline.library import Library
from egodesk.pipeline.textimport import import_memory_jsonl
from tests.doubles import ScriptedLLM
from tests.memory.conftest import add_footage


def test_memory_stats(store, lib_paths, embedder, make_video, make_footage):
    footage = make_video([[["umbrella", 0.8]], [["laptop", 0.7]]])
    empty = make_footage("empty", duration=120.0)
    indices = IndexManager(store, lib_paths.indices)
    build_parent_child(store, indices, embedder, footage)
    build_visual(store, indices, embedder, footage)

    rows = memory_stats(store, lib_paths.indices)
    mine = {(r["kind"], r["view"]): r for r in rows if r["footage_id"] == footage}
    assert set(mine) == {
        ("caption", ""),
        ("transcript", ""),
        ("subchunk", ""),
        ("frame", "visual"),
        ("visual-clip", "visual"),
        ("all", ""),
    }
    assert mine[("caption", "")]["units"] == 2 and mine[("caption", "")]["vectors"] == 2
    assert mine[("caption", "")]["vector_bytes"] == 2 * 384 * 4
    assert mine[("frame", "visual")]["vector_bytes"] == 4 * (1280 + 384) * 4  # tagger features + tag-list text
    total = mine[("all", "")]
    assert total["units"] == sum(r["units"] for k, r in mine.items() if k[0] != "all")
    assert total["bytes"] == total["text_bytes"] + total["vector_bytes"] + total["index_bytes"] > 0
    assert total["minutes"] == 0.5 and total["bytes_per_minute"] == round(total["bytes"] / 0.5)
    # the index shares add up to the files
    files = sum(indices.file_bytes(space) for space in indices.spaces())
    assert abs(sum(r["index_bytes"] for r in rows if r["kind"] != "all") - files) <= 10
    estimated = {(r["kind"], r["view"]): r for r in memory_stats(store) if r["footage_id"] == footage}
    assert 0 < estimated[("all", "")]["index_bytes"]
    assert [r for r in rows if r["footage_id"] == empty] == [
        {
            "footage_id": empty,
            "title": "empty",
            "kind": "all",
            "view": "",
            "units": 0,
            "vectors": 0,
            "text_bytes": 0,
            "vector_bytes": 0,
            "index_bytes": 0,
            "bytes": 0,
            "minutes": 2.0,
            "bytes_per_minute": 0,
        }
    ]


class EntriesLLM(ScriptedLLM):
    """The LLM for the statistics test only (extraction has its own tests): each numbered entry
    "N. (wearer: Jake) I <verb> <object>." yields one record (verb, object) or one "action" statement,
    and each batch one "activity" statement citing all its entries."""

    def __init__(self):
        super().__init__(prompt_tokens=0)

    def reply(self, messages, schema):
        entries = [
            (int(n), verb, obj)
            for n, verb, obj in re.findall(r"^(\d+)\. \(wearer: \w+\) I (\w+) (.+?)\.$", messages[-1]["content"], re.M)
        ]
        if "records" in schema["properties"]:
            return {"records": [{"id": n, "action": verb, "object": obj} for n, verb, obj in entries]}
        return {
            "statements": [
                {"view": "action", "text": f"Jake {verb}s the {obj} (entry {n})", "ids": [n]} for n, verb, obj in entries
            ]
            + [{"view": "activity", "text": "Jake does chores", "ids": [n for n, *_ in entries]}]
        }


def narrations(source: str, rows: list[tuple[str, str]]) -> str:
    return "".join(
        json.dumps(
            {
                "id": f"{source}{i}",
                "source": source,
                "start": f"2020-01-01T{t}",
                "end": f"2020-01-01T{t[:-2]}{int(t[-2:]) + 1:02d}",
                "kind": "narration",
                "text": text,
            }
        )
        + "\n"
        for i, (t, text) in enumerate(rows)
    )


@pytest.fixture
def grown_library(library, tmp_path, embedder):
    """A library of three footage: "kitchen" (the same record three times in 4 s, then again 5 h later),
    "garden" (one record twice) and "empty" (nothing), each text footage with parent-child memory,
    interaction records and atomic statements built through the real code path."""
    memory = tmp_path / "memory.jsonl"
    memory.write_text(
        narrations(
            "kitchen",
            [
                ("09:00:00", "I take plate."),
                ("09:00:02", "I take plate."),
                ("09:00:04", "I take plate."),
                ("14:00:00", "I take plate."),
            ],
        )
        + narrations("garden", [("10:00:00", "I open gate."), ("10:00:02", "I open gate.")]),
        encoding="utf-8",
    )
    lib = Library(library)
    footage = import_memory_jsonl(lib.store, memory).footage_ids
    empty = add_footage(lib.store, "empty", duration=120.0)
    indices = IndexManager(lib.store, lib.paths.indices)
    settings = Settings(wearer_name="Jake", records_batch_size=12, atomic_batch_size=4)
    for footage_id in footage:
        build_parent_child(lib.store, indices, embedder, footage_id)
        build_records(lib.store, indices, embedder, EntriesLLM(), footage_id, settings)
        build_atomic(lib.store, indices, embedder, EntriesLLM(), footage_id, settings)
    yield lib, (*footage, empty)
    lib.close()


def test_footage_summary_reports_record_growth_and_atomic_views(grown_library):
    lib, (kitchen, garden, empty) = grown_library
    rows = memory_stats(lib.store, lib.paths.indices)
    summary = footage_summary(lib.store, lib.paths.indices)
    per = {f["footage_id"]: f for f in summary["footage"]}
    assert list(per) == [kitchen, garden, empty]
    # kitchen: identical records share one prototype and one entry; the repeat 5 h later scores
    # log 5 * exp(-1.14 * 4.9989) / (1 + log 2) = 0.0032 < tau = 0.2 and is dropped
    assert {
        k: per[kitchen]["records"][k]
        for k in ("raw_records", "kept_records", "dropped_records", "memory_entries", "prototypes", "compression")
    } == {"raw_records": 4, "kept_records": 3, "dropped_records": 1, "memory_entries": 1, "prototypes": 1, "compression": 4.0}
    assert per[kitchen]["records"]["curve"][-1] == {
        "t": per[kitchen]["records"]["curve"][-1]["t"],
        "raw": 4,
        "kept": 3,
        "entries": 1,
    }
    assert per[kitchen]["atomic"] == {"action": 4, "utterance": 0, "activity": 1, "conversation": 0}
    assert (
        per[garden]["records"]["raw_records"],
        per[garden]["records"]["kept_records"],
        per[garden]["records"]["memory_entries"],
    ) == (2, 2, 1)
    assert per[garden]["atomic"] == {"action": 2, "utterance": 0, "activity": 1, "conversation": 0}
    assert per[empty]["records"] == {
        "raw_records": 0,
        "kept_records": 0,
        "dropped_records": 0,
        "memory_entries": 0,
        "prototypes": 0,
        "compression": None,
        "curve": [],
    }
    assert per[empty]["units"] == 0 and per[empty]["bytes_per_minute"] == 0 and per[empty]["minutes"] == 2.0
    # sizes are the "all" rows of memory_stats; atomic counts its atomic rows
    for f in summary["footage"]:
        total = next(r for r in rows if r["footage_id"] == f["footage_id"] and r["kind"] == "all")
        assert {k: f[k] for k in ("units", "vectors", "bytes", "text_bytes", "minutes", "bytes_per_minute")} == {
            k: total[k] for k in ("units", "vectors", "bytes", "text_bytes", "minutes", "bytes_per_minute")
        }
        assert sum(f["atomic"].values()) == sum(
            r["units"] for r in rows if r["footage_id"] == f["footage_id"] and r["kind"] == "atomic"
        )
    assert per[kitchen]["minutes"] == round((5 * 3600 + 1) / 60, 3)
    assert per[kitchen]["text_bytes_per_minute"] == round(per[kitchen]["text_bytes"] / per[kitchen]["minutes"])
    totals = summary["totals"]
    assert totals["footage"] == 3 and totals["units"] == sum(f["units"] for f in per.values())
    assert totals["bytes_per_minute"] == round(sum(f["bytes"] for f in per.values()) / sum(f["minutes"] for f in per.values()))
    assert totals["records"] == {
        "raw_records": 6,
        "kept_records": 5,
        "dropped_records": 1,
        "memory_entries": 2,
        "prototypes": 2,
        "compression": 3.0,
    }
    assert totals["atomic"] == {"action": 6, "utterance": 0, "activity": 2, "conversation": 0}


def test_cli_prints_aligned_tables_and_the_same_as_json(grown_library, capsys):
    lib, (kitchen, garden, empty) = grown_library
    assert main(["memory", "stats"]) == 0
    text = capsys.readouterr().out
    growth = text.split("\n\n")[1].splitlines()[1:]  # after the title line
    assert growth[0].split() == [
        "footage",
        "min",
        "units",
        "KB/min",
        "text",
        "KB/min",
        "records",
        "kept",
        "entries",
        "prototypes",
        "rec/entry",
        "action",
        "utterance",
        "activity",
        "conversation",
    ]
    assert len({len(line) for line in growth}) == 1  # aligned columns
    assert growth[1].split()[0] == "kitchen" and growth[1].split()[5:] == ["4", "3", "1", "1", "4.00", "4", "0", "1", "0"]
    assert growth[3].split()[0] == "empty" and growth[3].split()[5:] == ["0", "0", "0", "0", "-", "0", "0", "0", "0"]
    assert growth[4].startswith("total (3 footage)") and growth[4].split()[7:] == ["6", "5", "2", "2", "3.00", "6", "0", "2", "0"]
    units_table = text.split("\n\n")[0].splitlines()
    assert len({len(line) for line in units_table}) == 1 and any(
        line.split()[1:3] == ["atomic", "action"] for line in units_table
    )

    assert main(["memory", "stats", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == json.loads(
        json.dumps({"units": memory_stats(lib.store, lib.paths.indices), **footage_summary(lib.store, lib.paths.indices)})
    )
