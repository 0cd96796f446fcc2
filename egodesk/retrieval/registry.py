"""The retrieval strategies by name, for settings, the CLI, the app and the benchmarks.

The strategy modules import `base` and never this module, which imports them: no import cycle.
"""

from __future__ import annotations

from egodesk.retrieval.auto import Auto
from egodesk.retrieval.base import Memory, Strategy
from egodesk.retrieval.carve import Carve
from egodesk.retrieval.context import Context
from egodesk.retrieval.parent import Flat, Hybrid, Parent, ParentTime, Subchunk
from egodesk.retrieval.records import Records
from egodesk.retrieval.rerank import Rerank
from egodesk.retrieval.timeaware import TimeAware

STRATEGIES: dict[str, type[Strategy]] = {
    cls.name: cls for cls in (Flat, Subchunk, Parent, ParentTime, Hybrid, Rerank, Context, Carve, TimeAware, Records, Auto)
}


def strategy_names() -> list[str]:
    return list(STRATEGIES)


def strategy_class(name: str) -> type[Strategy]:
    if name not in STRATEGIES:
        raise KeyError(f"unknown retrieval strategy {name!r}; known: {', '.join(STRATEGIES)}")
    return STRATEGIES[name]


def make_strategy(name: str, memory: Memory) -> Strategy:
    return strategy_class(name)(memory)
