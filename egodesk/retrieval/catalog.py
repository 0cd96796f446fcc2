"""An in-memory snapshot of the library's memory units: the columns retrieval filters and sorts by.

Every strategy needs the same things about a unit many times per question (its footage, time, kind,
parent, text), and one SQL round trip per candidate would eat the latency budget. The snapshot is a
set of numpy columns loaded in one query and reloaded only when the unit table changed (its row count
or largest id moved). It is on the path of a library's first question, so it is read straight from
the driver into numpy (SQLAlchemy's row processing and JSON decoding made 175k units take 2.8 s of
CPU; now 0.5 s). The JSON meta column is read from the database only when a strategy first reads a
unit's meta (only `records` does; a quarter of the first question's catalog time at 200 hours) and
each unit's meta is decoded only when read: most never are.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from egodesk.core.types import Evidence
from egodesk.memory.store import Footage, Store, Unit

# The units a reasoner reads in parent retrieval: a clip's caption, its transcript group, or a person's note
# on a moment (`memory.parent_child`).
PARENT_KINDS = ("caption", "transcript", "note")


@dataclass
class Catalog:
    ids: np.ndarray  # int64, sorted
    footage: np.ndarray  # int64
    clip: np.ndarray  # int64, -1 when none
    parent: np.ndarray  # int64, -1 when none
    start: np.ndarray  # float64
    end: np.ndarray
    kind: np.ndarray  # object (str)
    view: np.ndarray  # object (str)
    text: list[str]
    meta: Sequence[dict | None]
    titles: dict[int, str]  # footage id -> title (a benchmark source name)
    stamp: tuple[int, int]
    _masks: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def rows(self, unit_ids: Iterable[int]) -> np.ndarray:
        """Row positions of unit ids (ids not in the snapshot are dropped)."""
        wanted = np.fromiter((int(i) for i in unit_ids), dtype=np.int64)
        pos = np.searchsorted(self.ids, wanted)
        pos = np.clip(pos, 0, max(len(self.ids) - 1, 0))
        return pos[(len(self.ids) > 0) & (self.ids[pos] == wanted)] if len(self.ids) else pos[:0]

    def row(self, unit_id: int) -> int | None:
        found = self.rows([unit_id])
        return int(found[0]) if len(found) else None

    def footage_ids(self, sources: Sequence[str | int] | None) -> set[int] | None:
        """Footage ids named by `sources` (titles or ids); None means the whole library."""
        if not sources:
            return None
        by_title: dict[str, set[int]] = {}
        for fid, title in self.titles.items():
            by_title.setdefault(title, set()).add(fid)
        out: set[int] = set()
        for source in sources:
            if isinstance(source, int) or (isinstance(source, str) and source.isdigit() and int(source) in self.titles):
                out.add(int(source))
            else:
                out |= by_title.get(str(source), set())
        return out

    def mask(
        self,
        kinds: Sequence[str] | None = None,
        footage: set[int] | None = None,
        before: float | None = None,
        views: Sequence[str] | None = None,
    ) -> np.ndarray:
        """Boolean row mask: units of these kinds/views, in these footages, starting before `before`."""
        keep = np.ones(len(self.ids), dtype=bool)
        if kinds is not None:
            keep &= self._any_of("kind", kinds)
        if views is not None:
            keep &= self._any_of("view", views)
        if footage is not None:
            keep &= np.isin(self.footage, np.fromiter(footage, dtype=np.int64))
        if before is not None:
            keep &= self.start < before
        return keep

    def _any_of(self, column: str, values: Sequence[str]) -> np.ndarray:
        """Rows whose kind/view is one of `values`; one boolean column per value, computed once."""
        out = np.zeros(len(self.ids), dtype=bool)
        for value in values:
            key = (column, value)
            if key not in self._masks:
                self._masks[key] = getattr(self, column) == value
            out |= self._masks[key]
        return out

    def parent_row(self, row: int) -> int:
        """The row of a unit's parent (itself when it has none or the parent is not loaded)."""
        parent = int(self.parent[row])
        if parent < 0:
            return row
        found = self.row(parent)
        return row if found is None else found

    def evidence(self, row: int, score: float, strategy: str, **extra) -> Evidence:
        fid = int(self.footage[row])
        return Evidence(
            unit_id=int(self.ids[row]),
            footage_id=fid,
            source=self.titles.get(fid, str(fid)),
            start=float(self.start[row]),
            end=float(self.end[row]),
            text=self.text[row],
            score=float(score),
            kind=str(self.kind[row]),
            strategy=strategy,
            view=str(self.view[row]),
            **extra,
        )

    def neighbours(self, row: int, kinds: Sequence[str], after: bool, count: int, before: float | None = None) -> list[int]:
        """Up to `count` rows of the same footage and kinds right after (or before) a unit, nearest first."""
        same = np.flatnonzero((self.footage == self.footage[row]) & self._any_of("kind", kinds))
        same = same[same != row]
        if before is not None:
            same = same[self.start[same] < before]
        if after:
            same = same[
                (self.start[same] > self.start[row]) | ((self.start[same] == self.start[row]) & (self.ids[same] > self.ids[row]))
            ]
            order = np.lexsort((self.ids[same], self.start[same]))
        else:
            same = same[
                (self.start[same] < self.start[row]) | ((self.start[same] == self.start[row]) & (self.ids[same] < self.ids[row]))
            ]
            order = np.lexsort((-self.ids[same], -self.start[same]))
        return [int(i) for i in same[order][:count]]

    def moment(self, row: int) -> int:
        """The moment a unit belongs to: its clip (a clip's caption, transcript and the statements cut
        from it are one moment), or the unit itself, as a negative id, when it has no clip."""
        return int(self.clip[row]) if self.clip[row] >= 0 else -int(self.ids[row])

    def moment_rows(self, moment: int) -> np.ndarray:
        """The rows of one moment (see `moment`)."""
        if moment < 0:
            found = self.row(-moment)
            return np.array([] if found is None else [found], dtype=np.int64)
        return np.flatnonzero(self.clip == moment)

    def following_moments(self, row: int, allowed: np.ndarray, after: bool, count: int) -> list[int]:
        """One row for each of the next `count` moments after (before) a unit's moment, nearest first:
        on the same day, across footage (what a person did after a meeting was filmed in the next
        file), among the `allowed` rows; a moment is shown by its caption where it has one."""
        day = np.floor(self.start / 86400.0)
        same = np.flatnonzero(allowed & (day == day[row]))
        same = same[self.start[same] >= self.start[row]] if after else same[self.start[same] <= self.start[row]]
        order = np.lexsort((self.ids[same], self.start[same] if after else -self.start[same]))
        own = self.moment(row)
        shown: dict[int, int] = {}  # moment -> its row, in the order the moments come
        for r in same[order].tolist():
            moment = self.moment(r)
            if moment == own:
                continue
            if moment not in shown:
                if len(shown) == count:
                    break
                shown[moment] = r
            elif self.kind[r] == "caption" and self.kind[shown[moment]] != "caption":
                shown[moment] = r
        return list(shown.values())


def _stamp(store: Store) -> tuple[int, int]:
    with store.session() as s:
        count, top = s.execute(select(func.count(Unit.id), func.coalesce(func.max(Unit.id), 0))).one()
    return int(count), int(top)


class LazyJSON(Sequence):
    """A column of JSON texts aligned with the snapshot's ids: read from the store on first use, each
    text decoded when it is read. A unit deleted since the snapshot was taken reads as None."""

    def __init__(self, store: Store, ids: np.ndarray):
        self._store, self._ids = store, ids
        self._raw: list[str | None] | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._ids)

    def _column(self) -> list[str | None]:
        with self._lock:
            if self._raw is None:
                raw: list[str | None] = [None] * len(self._ids)
                if len(self._ids):
                    with self._store.session() as s:
                        sql = f"SELECT id, meta FROM {Unit.__tablename__} WHERE id <= ? ORDER BY id"
                        found = _driver_cursor(s, sql, (int(self._ids[-1]),)).fetchall()
                    ids = np.fromiter((row[0] for row in found), dtype=np.int64, count=len(found))
                    pos = np.searchsorted(self._ids, ids)
                    for (_, meta), at, unit_id in zip(found, pos.tolist(), ids.tolist()):
                        if at < len(self._ids) and self._ids[at] == unit_id:
                            raw[at] = meta
                self._raw = raw
            return self._raw

    @overload
    def __getitem__(self, row: int) -> dict | None: ...

    @overload
    def __getitem__(self, row: slice) -> list[dict | None]: ...

    def __getitem__(self, row: int | slice) -> dict | None | list[dict | None]:
        if isinstance(row, slice):
            return [self[i] for i in range(*row.indices(len(self)))]
        raw = self._column()[row]
        return None if raw is None else json.loads(raw)


def _driver_cursor(session: Session, sql: str, params: tuple = ()) -> Any:
    """A cursor of the SQLite driver itself, under the session's connection: numpy reads its rows with no
    ORM rows or Python tuples in between."""
    driver = session.connection().connection.driver_connection
    if driver is None:
        raise RuntimeError("the library's database connection is closed")
    return driver.execute(sql, params)


# One row of the unit table as numpy reads it from the driver's cursor (no Python tuples in between).
_ROW = np.dtype(
    [
        ("id", "i8"),
        ("footage", "i8"),
        ("clip", "i8"),
        ("parent", "i8"),
        ("start", "f8"),
        ("end", "f8"),
        ("kind", "O"),
        ("view", "O"),
        ("text", "O"),
    ]
)
_SELECT = (
    "SELECT id, footage_id, coalesce(clip_id, -1), coalesce(parent_id, -1), start_ts, end_ts, kind, coalesce(view, ''), "
    "coalesce(text, '') FROM {table} ORDER BY id"
)


def load_catalog(store: Store) -> Catalog:
    with store.session() as s:
        rows = np.fromiter(_driver_cursor(s, _SELECT.format(table=Unit.__tablename__)), dtype=_ROW)
        titles = {fid: title or str(fid) for fid, title in s.execute(select(Footage.id, Footage.title))}
    ids = rows["id"].copy()
    return Catalog(
        ids=ids,
        footage=rows["footage"].copy(),
        clip=rows["clip"].copy(),
        parent=rows["parent"].copy(),
        start=rows["start"].copy(),
        end=rows["end"].copy(),
        kind=rows["kind"].copy(),
        view=rows["view"].copy(),
        text=rows["text"].tolist(),
        meta=LazyJSON(store, ids),
        titles=titles,
        stamp=(len(rows), int(rows["id"][-1]) if len(rows) else 0),
    )


class CatalogCache:
    """The current snapshot of a store, reloaded when units were added or removed. The change check
    (one COUNT/MAX query) runs at most once per `FRESH_S`, so a question's many look-ups cost nothing."""

    FRESH_S = 1.0

    def __init__(self, store: Store):
        self.store = store
        self._catalog: Catalog | None = None
        self._checked = 0.0
        self._lock = threading.Lock()

    def stale(self) -> None:
        """Units were just changed by this process (a note, a corrected line): check at the next look-up,
        not up to `FRESH_S` later, so the next question reads them."""
        with self._lock:
            self._checked = float("-inf")

    def get(self) -> Catalog:
        with self._lock:
            now = time.monotonic()
            if self._catalog is None or now - self._checked > self.FRESH_S:
                stamp = _stamp(self.store)
                if self._catalog is None or self._catalog.stamp != stamp:
                    self._catalog = load_catalog(self.store)
                self._checked = now
            return self._catalog
