"""The search-as-you-type index: one SQLite FTS5 table over every text a library holds for a moment:
what was said (transcript segments), what was on screen (keyframe OCR), what the tagger saw (keyframe
labels), the clip captions, the memories (consolidated memory entries and EgoCITE atomic statements) and
the person's own notes on moments (added by migration 4, `index_notes`).

Triggers on the source tables keep it in step: a stage's rows and their index rows are written in the
stage's own transaction, so a footage is searchable stage by stage while the import runs and a crash
leaves neither half. Deletes (re-runs of a stage, `forget`, foreign-key cascades) remove their rows the
same way. The migration that creates it fills it from what an existing library already holds.

Each row's rowid is its source row's id times `ROWID_SPAN` plus its kind's code, so a trigger finds the
row to replace or delete by rowid (the FTS table cannot index its other columns). Records are left
out: the memory entries consolidate them, and each would appear twice.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.engine import Connection

TABLE = "text_search"
VOCAB_TABLE = "text_search_vocab"  # fts5vocab: each indexed word and the rows holding it
ROWID_SPAN = 8
# kind -> rowid code; the kinds a hit reports
KIND_CODES = {"speech": 1, "screen": 2, "tags": 3, "caption": 4, "memory": 5, "note": 6}
MEMORY_KINDS = ("memory-entry", "atomic")

_COLUMNS = "rowid, text, kind, footage_id, clip_id, start_ts, end_ts"
_MEMORY = "('" + "', '".join(MEMORY_KINDS) + "')"


def _rowid(alias: str, kind: str) -> str:
    return f"{alias}.id * {ROWID_SPAN} + {KIND_CODES[kind]}"


def _labels(alias: str) -> str:
    """A keyframe's tagger labels ([[label, score], ...] JSON) as one line of words."""
    return f"(SELECT group_concat(value ->> 0, ', ') FROM json_each({alias}.labels))"


# kind -> (source table, the SELECT list of one index row for a source row aliased `{a}`, the rows it covers,
# the columns whose update changes its row)
_SOURCES: dict[str, tuple[str, str, str, str]] = {
    "speech": (
        "transcript_segment",
        "{rowid}, {a}.text, 'speech', {a}.footage_id, {a}.clip_id, {a}.start_ts, {a}.end_ts",
        "{a}.text != ''",
        "text, start_ts, end_ts, clip_id",
    ),
    "screen": (
        "keyframe",
        "{rowid}, {a}.ocr_text, 'screen', (SELECT footage_id FROM clip WHERE clip.id = {a}.clip_id), {a}.clip_id, {a}.ts, {a}.ts",
        "coalesce({a}.ocr_text, '') != ''",
        "ocr_text, ts, clip_id",
    ),
    "tags": (
        "keyframe",
        "{rowid}, " + _labels("{a}") + ", 'tags', (SELECT footage_id FROM clip WHERE clip.id = {a}.clip_id), "
        "{a}.clip_id, {a}.ts, {a}.ts",
        "json_array_length(coalesce({a}.labels, '[]')) > 0",
        "labels, ts, clip_id",
    ),
    "caption": (
        "caption",
        "{rowid}, {a}.text, 'caption', {a}.footage_id, {a}.clip_id, {a}.start_ts, {a}.end_ts",
        "{a}.text != ''",
        "text, start_ts, end_ts, clip_id",
    ),
    "memory": (
        "unit",
        "{rowid}, {a}.text, 'memory', {a}.footage_id, {a}.clip_id, {a}.start_ts, {a}.end_ts",
        "{a}.kind IN " + _MEMORY + " AND {a}.text != ''",
        "kind, text, start_ts, end_ts, clip_id",
    ),
    "note": (
        "note",
        "{rowid}, {a}.text, 'note', {a}.footage_id, (SELECT id FROM clip WHERE clip.footage_id = {a}.footage_id "
        "AND clip.start_ts <= {a}.start_ts ORDER BY clip.start_ts DESC LIMIT 1), {a}.start_ts, {a}.end_ts",
        "{a}.text != ''",
        "text, start_ts, end_ts",
    ),
}
# The kinds migration 3 indexed; later kinds come with the migration that adds their table.
FIRST_KINDS = ("speech", "screen", "tags", "caption", "memory")


def _select(kind: str, alias: str) -> tuple[str, str]:
    _table, columns, where, _changes = _SOURCES[kind]
    fill = {"a": alias, "rowid": _rowid(alias, kind)}
    return columns.format(**fill), where.format(**fill)


def _triggers(kind: str) -> list[str]:
    """Insert, delete and update triggers of one kind: an update replaces the row (or removes it when the
    source row no longer holds text of this kind, as a keyframe whose OCR found nothing)."""
    table, _columns, _where, changes = _SOURCES[kind]
    new_columns, new_where = _select(kind, "NEW")
    insert = f"INSERT INTO {TABLE}({_COLUMNS}) SELECT {new_columns} WHERE {new_where};"
    delete = f"DELETE FROM {TABLE} WHERE rowid = {_rowid('OLD', kind)};"
    name = f"{TABLE}_{kind}"
    return [
        f"CREATE TRIGGER {name}_insert AFTER INSERT ON {table} BEGIN {insert} END",
        f"CREATE TRIGGER {name}_delete AFTER DELETE ON {table} BEGIN {delete} END",
        f"CREATE TRIGGER {name}_update AFTER UPDATE OF {changes} ON {table} BEGIN {delete} {insert} END",
    ]


def _index_kind(conn: Connection, kind: str) -> None:
    """The triggers that keep one kind's rows in step, and the rows of what is already stored."""
    for trigger in _triggers(kind):
        conn.execute(text(trigger))
    columns, where = _select(kind, "s")
    conn.execute(text(f"INSERT INTO {TABLE}({_COLUMNS}) SELECT {columns} FROM {_SOURCES[kind][0]} AS s WHERE {where}"))


def create_text_search(conn: Connection) -> None:
    """Migration 3: the FTS5 table, its triggers, and the rows of everything already stored."""
    conn.execute(
        text(
            f"CREATE VIRTUAL TABLE {TABLE} USING fts5(text, kind UNINDEXED, footage_id UNINDEXED, clip_id UNINDEXED, "
            "start_ts UNINDEXED, end_ts UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')"
        )
    )
    conn.execute(text(f"CREATE VIRTUAL TABLE {VOCAB_TABLE} USING fts5vocab({TABLE}, row)"))
    for kind in FIRST_KINDS:
        _index_kind(conn, kind)


def index_notes(conn: Connection) -> None:
    """Part of migration 4: the person's notes join the index (their table exists by then)."""
    _index_kind(conn, "note")
