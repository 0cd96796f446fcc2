"""Memory build time per minute of footage, per builder and LLM tier, and the memory's size per minute.

Three fixed subsets: two text ones, each the first N entries (time order) of a benchmark's first
source imported with `import_memory_jsonl` (the footage's minutes are the entries' span), and one video:
- narration (quiet footage): epic-dev's P01_11, one short narration per entry. --quick: N = 6
  (0.55 min); full: N = 12 (0.87 min).
- dialogue (dialogue-dense): LoCoMo's first conversation, one spoken line per 20 s entry. --quick:
  N = 6 (2 min); full: N = 12 (4 min).
- footage (real video with speech throughout): the composite clip of ../shared/media (walk video + JFK
  speech) looped to 1 minute (--quick: 0.5 min) by ingest_rtf's `make_footage`, ingested with the
  default models up to its parent-child memory; the LLM memories are built on a copy of it per tier,
  and its visual memory is built and timed too.
Each LLM tier builds into its own scratch library (records then atomic statements, default batch
sizes, LLM and embedder on 2 threads); model loading and the builders' rules, evaluated once per model
load and kept, are timed apart (load_s, heads_s), not in a build's seconds. The LLM's part of each
build is metered too (its seconds, prompt and reply tokens per minute of footage): what an inference
server would take over (benchmarks/library_cost.py). Sizes come from `egodesk.memory.stats` (KB =
1000 bytes): text alone, as the parent-retrieval paper counts its 66.07 KB/min, and with vectors and
index shares. Prints the per-builder table, then the figures in the benchmarks' common table; `--json
FILE` writes the figures for run.py, and `main(argv)` returns everything as a dict.
Run it on idle cores: llama.cpp on 2 threads slows many-fold when they are shared (MODELS.md: 75 ->
1.5 tok/s), and the load average is printed with the table for that reason.

    .venv/bin/python benchmarks/memory_build.py [--quick] [--tiers llm-test,llm-fast,llm-quality]
        [--subsets narration,dialogue,footage] [--json FILE]

Default tiers: llm-test,llm-fast with --quick, all three otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from common import EPIC_DEV, IMPRINT_KB_PER_MIN, LOCOMO, MEMORY_RTF_GOAL, PARENT_KB_PER_MIN, Report, add_output_args
from ingest_rtf import make_footage
from sqlalchemy import func, select

from egodesk.core.paths import LibraryPaths
from egodesk.core.settings import Settings
from egodesk.memory import atomic, parent_child, record_compression, visual
from egodesk.memory.atomic import atomic_head, build_atomic
from egodesk.memory.indices import IndexManager
from egodesk.memory.parent_child import build_parent_child
from egodesk.memory.record_compression import build_records
from egodesk.memory.records import record_head
from egodesk.memory.stats import footage_summary, memory_stats
from egodesk.memory.store import Footage, Keyframe, Store
from egodesk.memory.visual import build_visual
from egodesk.perception.embedder import make_embedder
from egodesk.perception.llm import make_llm
from egodesk.pipeline.library import Library
from egodesk.pipeline.textimport import import_memory_jsonl

THREADS = 2
TIERS = ("llm-test", "llm-fast", "llm-quality")
# quiet and dialogue-dense text, and real footage with speech throughout (its captions and transcript)
SUBSETS = {"narration": EPIC_DEV, "dialogue": LOCOMO, "footage": None}
# which builder made a unit kind (memory_stats groups by kind)
MEMORY_BUILDERS = ("records", "atomic")  # the LLM-built memories
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


def text_subset(folder: Path, name: str, entries: int) -> tuple[Path, str]:
    """The first `entries` entries (time order) of the subset's benchmark's first source, as a memory.jsonl."""
    benchmark = SUBSETS[name]
    rows = [json.loads(line) for line in (benchmark / "memory.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    source = rows[0]["source"]
    chosen = sorted((r for r in rows if r["source"] == source), key=lambda r: (r["start"], r["end"]))[:entries]
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in chosen), encoding="utf-8")
    return path, source


def _timed(fn, *args, **kw):
    started = time.perf_counter()
    result = fn(*args, **kw)
    return result, time.perf_counter() - started


def _row(
    builder: str, subset: str, tier: str, units_in: int, units_out: int, minutes: float, seconds: float, sizes: dict, **extra
) -> dict:
    return {
        "builder": builder,
        "subset": subset,
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


def keep_builder_heads(llm, wearer: str) -> None:
    for head in (record_head(wearer), atomic_head(wearer)):
        llm.keep_prefix(head)


def text_builders(subsets: dict[str, Path], tiers: list[str], folder: Path, embedder) -> tuple[list[dict], list[dict]]:
    """Per tier (its model loaded once) and subset, in a library of its own: parent-child, then records
    and atomic statements. Returns the table rows and, per tier and subset, the whole text memory's
    size (`footage_summary` totals)."""
    rows, sizes = [], []
    for tier in tiers:
        settings = Settings(llm_model=tier, threads=THREADS)
        model, load_s = _timed(make_llm, settings, n_ctx=4096)
        # The builders' rules are evaluated once per model load and kept (LLM.keep_prefix): like the load,
        # a cost of starting the worker, not of the footage.
        _, heads_s = _timed(keep_builder_heads, model, settings.wearer_name)
        llm = MeteredLLM(model)
        for subset, source in subsets.items():
            imported = source.suffix == ".jsonl"
            if not imported:  # an ingested library, its parent-child memory built: a copy per tier
                shutil.copytree(source, folder / tier / subset)
            paths = LibraryPaths.at(folder / tier / subset).ensure()
            store = Store(paths.database)
            if imported:
                [footage_id] = import_memory_jsonl(store, source).footage_ids
            else:
                with store.session() as s:
                    footage_id = s.scalar(select(Footage.id))
            indices = IndexManager(store, paths.indices)
            parent, parent_s = _timed(build_parent_child, store, indices, embedder, footage_id, settings)
            extracted, records_s, records_llm = llm.measure(build_records, store, indices, embedder, llm, footage_id, settings)
            statements, atomic_s, atomic_llm = llm.measure(build_atomic, store, indices, embedder, llm, footage_id, settings)
            stats = memory_stats(store, paths.indices)
            summary = footage_summary(store, paths.indices, stats)["totals"]
            minutes = summary["minutes"]
            if tier == tiers[0] and imported:  # parent-child needs no LLM: the same build in every tier's library
                rows.append(
                    _row(
                        "parent-child",
                        subset,
                        "-",
                        parent.parents_added,
                        parent.units,
                        minutes,
                        parent_s,
                        _builder_sizes(stats, footage_id, "parent-child"),
                    )
                )
            growth = summary["records"]
            built = (
                ("records", extracted["clips"], growth["raw_records"] + growth["memory_entries"], records_s, records_llm,
                 {"kept": growth["kept_records"], "entries": growth["memory_entries"]}),
                ("atomic", statements["clips"], statements["statements"], atomic_s, atomic_llm,
                 {"per_view": statements["per_view"]}),
            )  # fmt: skip
            for builder, units_in, units_out, seconds, metered, extra in built:
                rows.append(
                    _row(
                        builder,
                        subset,
                        tier,
                        units_in,
                        units_out,
                        minutes,
                        seconds,
                        _builder_sizes(stats, footage_id, builder),
                        load_s=round(load_s, 1),
                        heads_s=round(heads_s, 1),
                        **extra,
                        **metered,
                    )
                )
            sizes.append(
                {
                    "tier": tier,
                    "subset": subset,
                    "minutes": minutes,
                    "text_kb_per_min": round(summary["text_bytes_per_minute"] / 1000, 2),
                    "kb_per_min": round(summary["bytes_per_minute"] / 1000, 2),
                    "records": growth,
                    "atomic": summary["atomic"],
                }
            )
            store.close()
        del llm, model
    return rows, sizes


def ingest_composite(folder: Path, minutes: float) -> Path:
    """The looped composite clip (real video and speech) ingested up to its parent-child memory: the
    library's folder."""
    clip = make_footage(folder, minutes)
    library = Library(folder / "composite")
    library.save_settings(
        library.settings.model_copy(update={"threads": THREADS, "memory_records": False, "memory_atomic": False})
    )
    library.add([clip])
    done: set[str] = set()

    def on_progress(event) -> None:
        if event.message == "done":
            done.add(event.stage)

    library.process(progress=on_progress, should_stop=lambda: "memory-parent" in done)  # stop before memory-visual
    library.close()
    return folder / "composite"


def visual_builder(root: Path) -> dict:
    """Time the visual memory build of the ingested composite clip."""
    library = Library(root)
    [footage] = library.footage()
    with library.store.session() as s:
        keyframes = s.scalar(select(func.count()).select_from(Keyframe).where(Keyframe.feature.is_not(None))) or 0
    embedder = library.engines.embedder
    embedder.embed_documents(["warm up"])  # model loading is not the build's time
    report, seconds = _timed(build_visual, library.store, library.index_manager, embedder, footage.id)
    row = _row(
        "visual",
        "footage",
        "-",
        keyframes,
        report.units,
        footage.duration / 60,
        seconds,
        _builder_sizes(memory_stats(library.store, library.paths.indices), footage.id, "visual"),
    )
    library.close()
    return row


def print_builders(result: dict) -> None:
    """The per-builder table: builder, subset, tier, units in and out, footage minutes, seconds, s/min, RTF,
    sizes; then records + atomic statements together per subset and tier (the LLM memories' RTF)."""
    for name, sub in result["subsets"].items():
        print(f"{name}: {sub['what']} ({sub['minutes']:.2f} min)")
    print(f"LLM and embedder threads: {THREADS}")
    header = ["builder", "subset", "tier", "units in", "units out", "footage min", "seconds", "s/min", "RTF"]
    header += ["text KB/min", "KB/min", "load s", "heads s"]
    lines = [
        [
            r["builder"],
            r["subset"],
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
            f"{r['heads_s']:.1f}" if "heads_s" in r else "-",
        ]
        for r in result["rows"]
    ]
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(len(header))]
    for line in [header, *lines]:
        print("  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))))
    print(
        "units in: entries (text builders) or keyframes (visual); RTF = build seconds / footage seconds; "
        "KB/min: text + vectors + index shares; load s: LLM load; heads s: the builders' rules evaluated once "
        "per model load (kept); neither is in seconds"
    )
    for llm in llm_memories(result["rows"]):
        print(
            f"LLM memories (records + atomic), {llm['subset']} [{llm['tier']}]: RTF {llm['rtf']:.3f}; "
            f"{llm['prompt_tokens_per_min']:.0f} prompt and {llm['reply_tokens_per_min']:.0f} reply tokens per min of footage"
        )
    for size in result["memory"]:
        g = size["records"]
        print(
            f"{size['subset']} [{size['tier']}]: records {g['raw_records']} raw, {g['kept_records']} kept, "
            f"{g['memory_entries']} entries, {g['prototypes']} prototypes; atomic statements {size['atomic']}"
        )
    print(f"load average (1 min): {result['load_start']:.2f} at start, {result['load_end']:.2f} at end", flush=True)


def llm_memories(rows: list[dict]) -> list[dict]:
    """Records and atomic statements together, per subset and tier: their RTF and LLM tokens per minute."""
    out = []
    for subset, tier in dict.fromkeys((r["subset"], r["tier"]) for r in rows if r["builder"] in MEMORY_BUILDERS):
        mine = [r for r in rows if r["builder"] in MEMORY_BUILDERS and (r["subset"], r["tier"]) == (subset, tier)]
        minutes = mine[0]["minutes"]
        out.append(
            {
                "subset": subset,
                "tier": tier,
                "minutes": minutes,
                "seconds": sum(r["seconds"] for r in mine),
                "rtf": sum(r["seconds"] for r in mine) / (minutes * 60),
                "llm_rtf": sum(r["llm_s"] for r in mine) / (minutes * 60),
                "prompt_tokens_per_min": sum(r["prompt_tokens"] for r in mine) / minutes,
                "reply_tokens_per_min": sum(r["reply_tokens"] for r in mine) / minutes,
            }
        )
    return out


def add_figures(report: Report, result: dict) -> None:
    """The figures for run.py: build s/min per builder, subset and tier, the LLM memories' RTF, and the
    text memory's size per subset and tier."""
    for r in result["rows"]:
        tier = "" if r["tier"] == "-" else f" [{r['tier']}]"
        units = "keyframes" if r["builder"] == "visual" else "entries"
        name = f"{r['builder']}, {r['subset']}{tier}"
        report.add(
            f"build {name}",
            r["s_per_min"],
            "s per min of footage",
            note=f"{r['units_in']} {units} -> {r['units_out']} units, {r['minutes']:.2f} min: {r['seconds']:.1f} s, RTF {r['rtf']:.3f}",
        )
        if "llm_s" in r:  # what a server would take over: the LLM's share and its tokens
            report.add(f"LLM share of {name}", r["llm_s"] / r["seconds"], "share")
            report.add(f"LLM prompt tokens, {name}", r["prompt_tokens"] / r["minutes"], "tokens per min of footage")
            report.add(f"LLM reply tokens, {name}", r["reply_tokens"] / r["minutes"], "tokens per min of footage")
    for llm in llm_memories(result["rows"]):
        report.add(f"RTF records + atomic, {llm['subset']} [{llm['tier']}]", llm["rtf"], "x real time", MEMORY_RTF_GOAL)
    for size in result["memory"]:
        name = f"{size['subset']} [{size['tier']}]"
        report.add(f"text memory, parent-child + records + atomic, {name}", size["text_kb_per_min"], "KB/min", PARENT_KB_PER_MIN)
        report.add(f"whole text memory with vectors and indices, {name}", size["kb_per_min"], "KB/min", IMPRINT_KB_PER_MIN)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", help="comma-separated LLM tiers (default: llm-test,llm-fast with --quick, else all three)")
    parser.add_argument(
        "--subsets", default=",".join(SUBSETS), help=f"comma-separated text subsets (default: {','.join(SUBSETS)})"
    )
    add_output_args(parser)
    args = parser.parse_args(argv)
    tiers = args.tiers.split(",") if args.tiers else list(TIERS[:2] if args.quick else TIERS)
    subsets = args.subsets.split(",")
    unknown = (set(tiers) - set(TIERS)) | (set(subsets) - set(SUBSETS))
    if unknown:
        parser.error(f"unknown tiers or subsets: {sorted(unknown)}")
    entries, footage_minutes = (6, 0.5) if args.quick else (12, 1.0)

    report = Report("memory-build")
    started, load_start = time.perf_counter(), os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="egodesk-membuild-") as tmp:
        folder = Path(tmp)
        chosen = {name: text_subset(folder, name, entries) for name in subsets if name != "footage"}
        composite = ingest_composite(folder, footage_minutes) if "footage" in subsets else None
        sources = {name: path for name, (path, _) in chosen.items()} | ({"footage": composite} if composite else {})
        embedder = make_embedder(threads=THREADS)
        embedder.embed_documents(["warm up"])
        rows, sizes = text_builders(sources, tiers, folder, embedder)
        visual = [visual_builder(composite)] if composite else []
    minutes = {r["subset"]: r["minutes"] for r in [*rows, *visual]}
    described = {
        name: f"the first {entries} entries of {SUBSETS[name].name} source {source}" for name, (_, source) in chosen.items()
    }
    if composite:
        described["footage"] = "the composite clip (walk video + JFK speech) looped, ingested up to its parent-child memory"
    result = {
        "subsets": {name: {"what": what, "minutes": minutes[name]} for name, what in described.items()},
        "rows": [*rows, *visual],
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
