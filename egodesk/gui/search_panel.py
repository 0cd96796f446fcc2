"""The search field: words and phrases found as they are typed (`Library.search`), listed by footage and
time with the matching words in bold; a click on a hit plays it (`hit_picked`), and the hits are marked on
the timeline (`hits_shown`). The window wires both to the footage view; a hit's right-click menu stars, notes
or exports its moment (`keep_requested`).

A search runs on the window's read thread (`Reads`), under one key, so a keystroke never waits on it and
a result overtaken by a newer query is dropped; typing pauses `DEBOUNCE_MS` before a search starts.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QPoint, Qt, QTimer, QUrl, Signal
from PySide6.QtWidgets import QLabel, QLineEdit, QMenu, QTextBrowser, QVBoxLayout, QWidget

from egodesk.gui.formatting import fmt_clock, fmt_duration
from egodesk.gui.kept import add_keep_actions
from egodesk.gui.reads import Reads

DEBOUNCE_MS = 150
LIMIT = 200
KIND_NAMES = {
    "speech": "said",
    "screen": "on screen",
    "tags": "seen",
    "caption": "caption",
    "memory": "memory",
    "note": "my note",
}


def hit_html(text: str, marks: list[tuple[int, int]]) -> str:
    """`text` escaped, its marked spans in bold."""
    out, at = [], 0
    for a, b in marks:
        out += [html.escape(text[at:a]), "<b>", html.escape(text[a:b]), "</b>"]
        at = b
    return "".join(out) + html.escape(text[at:])


class SearchPanel(QWidget):
    hits_shown = Signal(object)  # list of SearchHit, the latest search's
    hit_picked = Signal(int)  # index into those hits
    keep_requested = Signal(str, object, float, float)  # a keep action on a hit: action, footage id, start, end

    def __init__(self, search: Any, reads: Reads, parent: QWidget | None = None):
        """`search(text, limit)` is `Library.search`, run on the read thread."""
        super().__init__(parent)
        self.setObjectName("search-panel")
        self.search, self.reads = search, reads
        self.hits: list[Any] = []
        self.field = QLineEdit(self)
        self.field.setObjectName("search-field")
        self.field.setPlaceholderText('Search what was said, shown, seen… ("quotes" = exact)')
        self.field.setClearButtonEnabled(True)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.results = QTextBrowser(self)
        self.results.setObjectName("search-results")
        self.results.setOpenLinks(False)
        self.results.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.results.customContextMenuRequested.connect(self._menu)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.field)
        layout.addWidget(self.status)
        layout.addWidget(self.results, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.run)
        self.field.textChanged.connect(lambda _text: self._timer.start())
        self.field.returnPressed.connect(self.run)
        self.results.anchorClicked.connect(self._on_link)

    def run(self) -> None:
        """Search for the field's text now (off the GUI thread)."""
        self._timer.stop()
        query = self.field.text()
        if not query.strip():
            self._show_result(None)
            return
        self.reads.read("search", lambda: self.search(query, LIMIT), self._show_result, self._failed)

    def _show_result(self, result: Any) -> None:
        self.hits = result.hits if result is not None else []
        self.hits_shown.emit(self.hits)
        if result is None:
            self.status.clear()
            self.results.clear()
            return
        notes = [f"{len(self.hits)} hits" + (f" (the first {LIMIT}: add words to narrow)" if result.more else "")]
        if result.alike:
            notes.append("also as " + "; ".join(f"{w} ~ {', '.join(a[:4])}" for w, a in result.alike.items()))
        if result.indexing:
            notes.append(f"{result.indexing} footage still indexing: what is indexed so far is searched")
        self.status.setText(" · ".join(notes))
        parts, footage = [], None
        for i, hit in enumerate(self.hits):
            if hit.footage_id != footage:
                footage = hit.footage_id
                parts.append(f"<p style='margin-top:8px'><b>{html.escape(hit.title)}</b></p>")
            when = fmt_clock(hit.start)
            parts.append(
                f"<p style='margin:2px 0 2px 8px'><a href='hit:{i}'>{when} (+{fmt_duration(hit.offset)})</a> "
                f"<i>{KIND_NAMES.get(hit.kind, hit.kind)}</i> {hit_html(hit.text, hit.marks)}</p>"
            )
        self.results.setHtml("".join(parts))

    def _failed(self, exc: Exception) -> None:
        self.status.setText(f"Search failed: {exc}")

    def _hit_index(self, link: str) -> int | None:
        kind, _, index = link.partition(":")
        return int(index) if kind == "hit" and index.isdigit() and int(index) < len(self.hits) else None

    def _on_link(self, url: QUrl) -> None:
        index = self._hit_index(url.toString())
        if index is not None:
            self.hit_picked.emit(index)

    def _menu(self, pos: QPoint) -> None:
        """Right-click on a hit: the keep actions for its moment; elsewhere, the text's own menu."""
        index = self._hit_index(self.results.anchorAt(pos))
        if index is None:
            self.results.createStandardContextMenu(pos).exec(self.results.viewport().mapToGlobal(pos))
            return
        hit, menu = self.hits[index], QMenu(self)
        add_keep_actions(menu, lambda action: self.keep_requested.emit(action, hit.footage_id, hit.start, hit.end))
        menu.exec(self.results.viewport().mapToGlobal(pos))
