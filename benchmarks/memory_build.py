"""Memory build time per minute of footage, per builder and LLM tier, and the memory's size per minute.

Fixed subsets:
- text builders (parent-child, interaction records, atomic statements): the first N entries, in time
  order, of epic-dev's first source (P01_11), imported with `import_memory_jsonl`; the footage's
  minutes are the entries' span. --quick: N = 6 (0.55 min); full: N = 12 (0.87 min).
- visual builder: the composite clip of ../shared/media (walk video + JFK speech) looped to 1 minute
  (--quick: 0.5 min) by ingest_rtf's `make_footage`, ingested with the default models up to its
  parent-child memory; its visual memory is then built and timed.
Each LLM tier builds into its own scratch library (records then atomic statements, default batch
sizes, LLM and embedder on 2 threads); model loading is timed apart (load_s), not in a build's
seconds. The LLM's part of each build is metered too (its seconds, prompt and reply tokens per minute
of footage): what an inference server would take over (benchmarks/library_cost.py). Sizes come from
`egodesk.memory.stats` (KB = 1000 bytes): text alone, as the parent-retrieval paper counts its 66.07
KB/min, and with vectors and index shares. Prints the per-builder table, then
the figures in the benchmarks' common table; `--json FILE` writes the figures for run.py, and
`main(argv)` returns everything as a dict.
Run it on idle cores: llama.cpp on 2 threads slows many-fold when they are shared (MODELS.md: 75 ->
1.5 tok/s), and the load average is printed with the table for that reason.

    .venv/bin/python benchmarks/memory_build.py [--quick] [--tiers llm-test,llm-fast,llm-quality] [--json FILE]

Default tiers: llm-test,llm-fast with --quick, all three otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from common import EPIC_DEV, IMPRINT_KB_PER_MIN, PARENT_KB_PER_MIN, Report, add_output_args
from ingest_rtf import make_footage
from sqlalchemy import func, select

from egodesk.core.paths import LibraryPaths
from egodesk.core.settings import Settings
from egodesk.memory import atomic, parent_child, record_compression, visual
from egodesk.memory.atomic import build_atomic
from egodesk.memory.indices import IndexManager
from egodesk.memory.parent_child import build_parent_child
from egodesk.memory.record_compression import build_records
from egodesk.memory.stats import footage_summary, memory_stats
from egodesk.memory.store import Keyframe, Store
from egodesk.memory.visual import build_visual
from egodesk.perception.embedder import make_embedder
from egodesk.perception.llm import make_llm
from egodesk.pipeline.library import Library
from egodesk.pipeline.textimport import import_memory_jsonl

THREADS = 2
TIERS = ("llm-test", "llm-fast", "llm-quality")
# which builder made a unit kind (memory_stats groups by kind)
BUILDER_KINDS = {
    "parent-child": (parent_child.CAPTION, parent_child.TRANSCRIPT, parent_child.SUBCHUNK),
    "records": (record_compression.RECORD, record_compression.ENTRY),
    "atomic": (atomic.KIND,),
    "visual": (visual.FRAME, visual.CLIP),
}


class MeteredLLM:
    """The builders' LLM, counting what it was sent and what it wrote (tokens) and the seconds it took:
    what an inference server would be asked to do in place of this CPU."""

    def __init__(self, llm):
        self.llm = llm
        self.seconds, self.prompt_tokens, self.reply_tokens = 0.0, 0, 0

    def __getattr__(self, name):
        return getattr(self.llm, name)

    def chat(self, messages, *args, **kw):
        started = time.perf_counter()
        text, prompt_tokens = self.llm.chat(messages, *args, **kw)
        self.seconds += time.perf_counter() - started
        self.prompt_tokens += prompt_tokens
        self.reply_tokens += self.llm.count_tokens(text)
        return text, prompt_tokens

    def measure(self, fn, *args) -> tuple[object, float, dict]:
        """`fn(*args)`'s result, its seconds and the LLM work done during it."""
        self.seconds, self.prompt_tokens, self.reply_tokens = 0.0, 0, 0
        result, seconds = _timed(fn, *args)
        return (
            result,
            seconds,
            {"llm_s": round(self.seconds, 2), "prompt_tokens": self.prompt_tokens, "reply_tokens": self.reply_tokens},
        )


def text_subset(folder: Path, entries: int) -> tuple[Path, str]:
    """The first `entries` entries (time order) of the benchmark's first source, as a memory.jsonl."""
    rows = [json.loads(line) for line in (EPIC_DEV / "memory.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    source = rows[0]["source"]
    chosen = sorted((r for r in rows if r["source"] == source), key=lambda r: (r["start"], r["end"]))[:entries]
    path = folder / "subset.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in chosen), encoding="utf-8")
    return path, source


def _timed(fn, *args, **kw):
    started = time.perf_counter()
    result = fn(*args, **kw)
    return result, time.perf_counter() - started


def _row(builder: str, tier: str, units_in: int, units_out: int, minutes: float, seconds: float, sizes: dict, **extra) -> dict:
    return {
        "builder": builder,
        "tier": tier,
        "units_in": units_in,
        "units_out": units_out,
        "minutes": round(minutes, 3),
        "seconds": round(seconds, 2),
        "s_per_min": round(seconds / minutes, 2),
        "rtf": round(seconds / (minutes * 60), 3),
        "text_kb_per_min": round(sizes["text_bytes"] / minutes / 1000, 2),
        "kb_per_min": round(sizes["bytes"] / minutes / 1000, 2),
        **extra,
    }


def _builder_sizes(rows: list[dict], footage_id: int, builder: str) -> dict:
    mine = [r for r in rows if r["footage_id"] == footage_id and r["kind"] in BUILDER_KINDS[builder]]
    return {"text_bytes": sum(r["text_bytes"] for r in mine), "bytes": sum(r["bytes"] for r in mine)}


def text_builders(memory_jsonl: Path, tiers: list[str], folder: Path, embedder) -> tuple[list[dict], list[dict]]:
    """Parent-child once, then records and atomic statements per tier, each tier in its own library.
    Returns the table rows and, per tier, the whole text memory's size (`footage_summary` totals)."""
    rows, sizes = [], []
    for tier in tiers:
        paths = LibraryPaths.at(folder / tier).ensure()
        store = Store(paths.database)
        [footage_id] = import_memory_jsonl(store, memory_jsonl).footage_ids
        indices = IndexManager(store, paths.indices)
        settings = Settings(llm_model=tier, threads=THREADS)
        parent, parent_s = _timed(build_parent_child, store, indices, embedder, footage_id, settings)
        model, load_s = _timed(make_llm, settings, n_ctx=4096)
        llm = MeteredLLM(model)
        extracted, records_s, records_llm = llm.measure(build_records, store, indices, embedder, llm, footage_id, settings)
        statements, atomic_s, atomic_llm = llm.measure(build_atomic, store, indices, embedder, llm, footage_id, settings)
        del llm, model
        stats = memory_stats(store, paths.indices)
        summary = footage_summary(store, paths.indices, stats)["totals"]
        minutes = summary["minutes"]
        if not rows:  # parent-child needs no LLM: the same build in every tier's library
            rows.append(
                _row(
                    "parent-child",
                    "-",
                    parent.parents_added,
                    parent.units,
                    minutes,
                    parent_s,
                    _builder_sizes(stats, footage_id, "parent-child"),
                )
            )
        growth = summary["records"]
        rows.append(
            _row(
                "records",
                tier,
                extracted["clips"],
                growth["raw_records"] + growth["memory_entries"],
                minutes,
                records_s,
                _builder_sizes(stats, footage_id, "records"),
                load_s=round(load_s, 1),
                kept=growth["kept_records"],
                entries=growth["memory_entries"],
                **records_llm,
            )
        )
        rows.append(
            _row(
                "atomic",
                tier,
                statements["clips"],
                statements["statements"],
                minutes,
                atomic_s,
                _builder_sizes(stats, footage_id, "atomic"),
                load_s=round(load_s, 1),
                per_view=statements["per_view"],
                **atomic_llm,
            )
        )
        sizes.append(
            {
                "tier": tier,
                "minutes": minutes,
                "text_kb_per_min": round(summary["text_bytes_per_minute"] / 1000, 2),
                "kb_per_min": round(summary["bytes_per_minute"] / 1000, 2),
                "records": growth,
                "atomic": summary["atomic"],
            }
        )
        store.close()
    return rows, sizes


def visual_builder(folder: Path, minutes: float) -> dict:
    """Ingest the looped composite clip up to its parent-child memory, then time its visual memory build."""
    clip = make_footage(folder, minutes)
    library = Library(folder / "visual")
    library.save_settings(
        library.settings.model_copy(update={"threads": THREADS, "memory_records": False, "memory_atomic": False})
    )
    [footage_id] = library.add([clip]).added
    done: set[str] = set()

    def on_progress(event) -> None:
        if event.message == "done":
            done.add(event.stage)

    library.process(progress=on_progress, should_stop=lambda: "memory-parent" in done)  # stop before memory-visual
    with library.store.session() as s:
        keyframes = s.scalar(select(func.count()).select_from(Keyframe).where(Keyframe.feature.is_not(None))) or 0
    embedder = library.engines.embedder
    embedder.embed_documents(["warm up"])  # model loading is not the build's time
    report, seconds = _timed(build_visual, library.store, library.index_manager, embedder, footage_id)
    minutes = library.footage()[0].duration / 60
    row = _row(
        "visual",
        "-",
        keyframes,
        report.units,
        minutes,
        seconds,
        _builder_sizes(memory_stats(library.store, library.paths.indices), footage_id, "visual"),
    )
    library.close()
    return row


def print_builders(result: dict) -> None:
    """The per-builder table: builder, tier, units in and out, footage minutes, seconds, s/min, RTF, sizes."""
    sub = result["subset"]
    print(
        f"text subset: the first {sub['entries']} entries of epic-dev source {sub['source']} ({sub['text_minutes']:.2f} min); "
        f"visual: the composite clip looped to {sub['visual_minutes']:.2f} min; LLM and embedder threads: {THREADS}"
    )
    header = [
        "builder",
        "tier",
        "units in",
        "units out",
        "footage min",
        "seconds",
        "s/min",
        "RTF",
        "text KB/min",
        "KB/min",
        "load s",
    ]
    lines = [
        [
            r["builder"],
            r["tier"],
            str(r["units_in"]),
            str(r["units_out"]),
            f"{r['minutes']:.2f}",
            f"{r['seconds']:.1f}",
            f"{r['s_per_min']:.1f}",
            f"{r['rtf']:.3f}",
            f"{r['text_kb_per_min']:.2f}",
            f"{r['kb_per_min']:.1f}",
            f"{r['load_s']:.1f}" if "load_s" in r else "-",
        ]
        for r in result["rows"]
    ]
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(len(header))]
    for line in [header, *lines]:
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))))
    print(
        "units in: entries (text builders) or keyframes (visual); RTF = build seconds / footage seconds; "
        "KB/min: text + vectors + index shares; load s: LLM load, not in seconds"
    )
    for size in result["memory"]:
        g = size["records"]
        print(
            f"{size['tier']}: records {g['raw_records']} raw, {g['kept_records']} kept, {g['memory_entries']} entries, "
            f"{g['prototypes']} prototypes; atomic statements {size['atomic']}"
        )
    print(f"load average (1 min): {result['load_start']:.2f} at start, {result['load_end']:.2f} at end", flush=True)


def add_figures(report: Report, result: dict) -> None:
    """The figures for run.py: build s/min per builder and tier, and the text memory's size per tier."""
    for r in result["rows"]:
        tier = "" if r["tier"] == "-" else f" [{r['tier']}]"
        units = "keyframes" if r["builder"] == "visual" else "entries"
        report.add(
            f"build {r['builder']}{tier}",
            r["s_per_min"],
            "s per min of footage",
            note=f"{r['units_in']} {units} -> {r['units_out']} units, {r['minutes']:.2f} min: {r['seconds']:.1f} s, RTF {r['rtf']:.3f}",
        )
        if "llm_s" in r:  # what a server would take over: the LLM's share and its tokens
            report.add(f"LLM share of {r['builder']}{tier}", r["llm_s"] / r["seconds"], "share")
            report.add(f"LLM prompt tokens, {r['builder']}{tier}", r["prompt_tokens"] / r["minutes"], "tokens per min of footage")
            report.add(f"LLM reply tokens, {r['builder']}{tier}", r["reply_tokens"] / r["minutes"], "tokens per min of footage")
    for size in result["memory"]:
        report.add(
            f"text memory, parent-child + records + atomic [{size['tier']}]", size["text_kb_per_min"], "KB/min", PARENT_KB_PER_MIN
        )
        report.add(
            f"whole text memory with vectors and indices [{size['tier']}]", size["kb_per_min"], "KB/min", IMPRINT_KB_PER_MIN
        )


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", help="comma-separated LLM tiers (default: llm-test,llm-fast with --quick, else all three)")
    add_output_args(parser)
    args = parser.parse_args(argv)
    tiers = args.tiers.split(",") if args.tiers else list(TIERS[:2] if args.quick else TIERS)
    unknown = set(tiers) - set(TIERS)
    if unknown:
        parser.error(f"unknown tiers: {sorted(unknown)}")
    entries, visual_minutes = (6, 0.5) if args.quick else (12, 1.0)

    report = Report("memory-build")
    started, load_start = time.perf_counter(), os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="egodesk-membuild-") as tmp:
        folder = Path(tmp)
        memory_jsonl, source = text_subset(folder, entries)
        embedder = make_embedder(threads=THREADS)
        embedder.embed_documents(["warm up"])
        rows, sizes = text_builders(memory_jsonl, tiers, folder, embedder)
        visual = visual_builder(folder, visual_minutes)
    result = {
        "subset": {"source": source, "entries": entries, "text_minutes": rows[0]["minutes"], "visual_minutes": visual["minutes"]},
        "rows": [*rows, visual],
        "memory": sizes,
        "tiers": tiers,
        "threads": THREADS,
        "seconds": round(time.perf_counter() - started, 1),
        "load_start": load_start,
        "load_end": os.getloadavg()[0],
    }
    print_builders(result)
    add_figures(report, result)
    report.finish(args.json)
    print(f"run: {result['seconds']:.0f} s")
    result["figures"] = [vars(f) for f in report.figures]
    return result


if __name__ == "__main__":
    main()
