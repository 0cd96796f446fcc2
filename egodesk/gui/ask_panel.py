"""The ask panel: a question (and optional multiple-choice options), the answer when it comes, its
evidence as clickable chips, the retrieval inspector and this library's question history.

Asking runs `ops.ask` through the task runner (the LLM works in a worker process); the panel only
shows what comes back, as it comes: the moments found first (by relevance), then the answer's words
as the model writes them, then the checked answer with its cited moments first. The moments go to the
window's shared `Selection`, which the chips follow (a click picks one). Starting to type a
question gets the model ready (`ops.prepare_to_answer`), so the first answer costs what a follow-up
does; a pause in typing has the prompt for the question so far read ahead, so asking it costs the reply
(and what changed since). An empty question never starts anything: the panel says what is missing.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from egodesk.core.timeutil import now_ts
from egodesk.core.types import ABSTENTION, Answer, Evidence
from egodesk.gui import ops
from egodesk.gui.evidence import EvidenceChip, Inspector
from egodesk.gui.formatting import fmt_moment
from egodesk.gui.selection import Selection
from egodesk.gui.tasks import Task, TaskRunner
from egodesk.gui.widgets import Section, message_label, show_message

HISTORY_KEY = "ask/history"
HISTORY_MAX = 50
DRAFT_PAUSE_MS = 600  # typing paused this long: the question so far is read ahead
# A read-ahead told to stop (the question was asked, or edited) ends within a part of its prompt, a
# step of its answer or its retrieval; past this the worker is ended, and its model with it.
DRAFT_STOP_GRACE_S = 15.0


class AskPanel(QWidget):
    answer_ready = Signal(object)  # Answer
    asking_changed = Signal(bool)
    keep_requested = Signal(str, object, float, float)  # a chip's keep action: action, footage id, start, end

    def __init__(
        self,
        runner: TaskRunner,
        library_root: str,
        settings: QSettings,
        selection: Selection,
        thumbnail_for: Callable[[Evidence], Path | None],
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setObjectName("ask-panel")
        self.runner, self.library_root, self.store = runner, library_root, settings
        self.selection, self.thumbnail_for = selection, thumbnail_for
        self.answer: Answer | None = None
        self.chips: list[EvidenceChip] = []
        self.task: Task | None = None
        self._asked_at = 0.0
        self._prepared = False  # the warm worker was asked to get the model ready
        self.read_ahead_text = ""  # the question text last read ahead
        self.read_ahead: Task | None = None  # the read-ahead of the question being typed
        self.streamed = ""  # the answer's words so far, while it is written
        self.first_words_s: float | None = None  # seconds from asking to the first streamed words
        self.chips_s: float | None = None  # seconds from asking to the moments found shown

        self.question = QLineEdit(self)
        self.question.setObjectName("question")
        self.question.setPlaceholderText("Ask about your footage, e.g. “where did I leave my keys?”")
        self.question.returnPressed.connect(lambda: self.ask())
        self.question.textEdited.connect(self._typed)
        self.ask_button = QPushButton("Ask", self)
        self.ask_button.setObjectName("ask-button")
        self.ask_button.setDefault(True)
        self.ask_button.clicked.connect(lambda: self.ask())
        self.cancel_button = QPushButton("Stop", self)
        self.cancel_button.setObjectName("ask-cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.hide()
        self.options = QPlainTextEdit(self)
        self.options.setObjectName("options")
        self.options.setPlaceholderText("One option per line: the answer picks one of them")
        self.options.setMaximumHeight(90)
        self.message = message_label("ask-message", self)
        self.status = QLabel(self)
        self.status.setObjectName("ask-status")
        self.answer_label = QLabel(self)
        self.answer_label.setObjectName("answer")
        self.answer_label.setWordWrap(True)
        self.answer_label.setTextFormat(Qt.TextFormat.RichText)
        self.answer_label.setTextInteractionFlags(self.answer_label.textInteractionFlags() | self.message.textInteractionFlags())
        self.answer_label.hide()
        self.evidence_title = QLabel(self)
        self.evidence_title.setObjectName("evidence-title")
        self.evidence_title.hide()
        # Chips lead with the cited moments, then by relevance; this shows them in time order instead.
        self.time_order = QCheckBox("Time order", self)
        self.time_order.setObjectName("evidence-time-order")
        self.time_order.setToolTip("Show the moments in the order they happened instead of cited first, then by relevance")
        self.time_order.toggled.connect(self._arrange_chips)
        self.time_order.hide()
        self.chip_box = QWidget(self)
        self.chip_layout = QVBoxLayout(self.chip_box)
        self.chip_layout.setContentsMargins(0, 0, 0, 0)
        self.chip_layout.setSpacing(4)
        self.hint = QLabel(
            "Ask a question: the answer and the moments of your footage it rests on appear here. Click a moment to watch it.",
            self.chip_box,
        )
        self.hint.setObjectName("evidence-hint")
        self.hint.setWordWrap(True)
        self.chip_layout.addWidget(self.hint)
        self.chip_layout.addStretch(1)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.chip_box)
        scroll.setObjectName("evidence-scroll")
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumHeight(150)
        self.inspector = Inspector(self)
        self.history = QListWidget(self)
        self.history.setObjectName("history")
        self.history.setMaximumHeight(140)
        self.history.itemActivated.connect(self._from_history)
        self.history.itemClicked.connect(self._from_history)
        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_PAUSE_MS)
        self._draft_timer.timeout.connect(self._read_draft)
        self._elapsed = QTimer(self)
        self._elapsed.setInterval(500)
        self._elapsed.timeout.connect(self._tick)

        row = QHBoxLayout()
        row.addWidget(self.question, 1)
        row.addWidget(self.ask_button)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(row)
        self.options_section = Section("Multiple-choice options", self.options)
        layout.addWidget(self.options_section)
        layout.addWidget(self.message)
        layout.addWidget(self.status)
        layout.addWidget(self.answer_label)
        evidence_row = QHBoxLayout()
        evidence_row.addWidget(self.evidence_title, 1)
        evidence_row.addWidget(self.time_order)
        layout.addLayout(evidence_row)
        layout.addWidget(scroll, 1)
        self.inspector_section = Section("Retrieval inspector", self.inspector)
        layout.addWidget(self.inspector_section)
        self.history_section = Section("History", self.history)
        layout.addWidget(self.history_section)
        self._load_history()
        selection.shown.connect(self._show_chips)
        selection.picked.connect(self._mark_picked)

    # -- asking ----------------------------------------------------------------------------------

    def option_list(self) -> list[str]:
        return [line.strip() for line in self.options.toPlainText().splitlines() if line.strip()]

    def ask(self, question: str | None = None, options: list[str] | None = None) -> Task | None:
        """Ask `question` (default: what is typed). Returns the running task, or None when there was
        nothing to ask (the panel then says why)."""
        if question is not None:
            self.question.setText(question)
        if options is not None:
            self.options.setPlainText("\n".join(options))
            self.options_section.set_expanded(bool(options))
        text = self.question.text().strip()
        choices = self.option_list()
        if not text:
            show_message(self.message, "Type a question first, for example “what did I eat for lunch?”.", "error")
            self.question.setFocus()
            return None
        if len(choices) == 1:
            show_message(self.message, "Give at least two options, one per line, or none.", "error")
            return None
        if _active(self.task):
            show_message(self.message, "Still answering the previous question: wait, or press Stop.", "info")
            return None
        show_message(self.message, "")
        self._draft_timer.stop()
        if (reading := self.read_ahead) is not None and _active(reading):
            reading.cancel(grace_s=DRAFT_STOP_GRACE_S)  # it stops at its next part; the ask waits for it
        self.show_answer(None)
        self.streamed, self.first_words_s, self.chips_s = "", None, None
        self._asked_at = time.monotonic()
        self.task = self.runner.run(
            ops.ask,
            self.library_root,
            text,
            choices or None,
            None,
            None,
            label="Ask",
            warm=True,
            on_success=self._answered,
            on_failure=self._failed,
            on_cancel=lambda _m: self._done("Stopped."),
            on_partial=self._partial,
        )
        self._prepared = True  # the ask loads the model if nothing else did
        self._set_busy(True)
        return self.task

    def _typed(self) -> None:
        if not self._prepared:
            self._prepared = True
            self.runner.run(ops.prepare_to_answer, self.library_root, label="Get ready to answer", warm=True)
        self._draft_timer.start()

    def _read_draft(self) -> None:
        """Typing paused: read the prompt for the question so far and write its answer, unless that was
        done already or a question is being answered. One read at a time: a read of an older draft is
        told to stop (what it read so far stays), and this draft's turn comes at the next pause."""
        draft = self.question.text().strip()
        if not draft or draft == self.read_ahead_text or _active(self.task):
            return
        if (reading := self.read_ahead) is not None and _active(reading):
            reading.cancel(grace_s=DRAFT_STOP_GRACE_S)
            self._draft_timer.start()
            return
        self.read_ahead_text = draft
        self.read_ahead = self.runner.run(
            ops.prepare_to_answer,
            self.library_root,
            draft,
            self.option_list() or None,
            label="Get ready to answer",
            warm=True,
        )

    def cancel(self) -> None:
        if self.task is not None:
            self._prepared = False  # ending the task ends the warm worker and its loaded model
            self.read_ahead_text = ""  # and what it had read
            self.task.cancel(grace_s=0)  # nothing to keep from a half-made answer

    def _partial(self, message: tuple) -> None:
        """Part of the answer before the end: the moments found, or the next words of the answer."""
        kind, value = message
        if kind == "evidence":
            self.chips_s = time.monotonic() - self._asked_at
            self.selection.show(value)
        elif kind == "text":
            if self.first_words_s is None:
                self.first_words_s = time.monotonic() - self._asked_at
            self.streamed += value
            self.answer_label.setProperty("abstained", False)
            self.answer_label.setText(f"{html.escape(self.streamed)} ▍")
            self.answer_label.show()

    def _answered(self, answer: Answer) -> None:
        self._done("")
        self.present(answer)

    def present(self, answer: Answer) -> None:
        """An answer arrived: show it and its moments, keep it in the history."""
        self.show_answer(answer)
        self.selection.show(answer.evidence, answer)
        self._remember(answer)
        self.answer_ready.emit(answer)

    def _failed(self, message: str) -> None:
        self._done("")
        show_message(self.message, f"Could not answer: {message}", "error")

    def _done(self, status: str) -> None:
        self._set_busy(False)
        self.status.setText(status)

    def _set_busy(self, busy: bool) -> None:
        self.ask_button.setEnabled(not busy)
        self.cancel_button.setVisible(busy)
        self.hint.setVisible(not busy and self.answer is None)
        if busy:
            self._elapsed.start()
            self._tick()
        else:
            self._elapsed.stop()
        self.asking_changed.emit(busy)

    def _tick(self) -> None:
        doing = "Answering" if self.chips else "Searching your memories"
        self.status.setText(f"{doing}… {time.monotonic() - self._asked_at:.0f} s")

    # -- showing an answer -----------------------------------------------------------------------

    def show_answer(self, answer: Answer | None) -> None:
        """The answer's text and the inspector (its moments come through the selection)."""
        self.answer = answer
        self.inspector.show_answer(answer)
        self.hint.setVisible(answer is None and not self.cancel_button.isVisibleTo(self))
        if answer is None:
            self.selection.show([])
            self.answer_label.hide()
            return
        self.answer_label.setProperty("abstained", answer.abstained)
        self.answer_label.style().unpolish(self.answer_label)
        self.answer_label.style().polish(self.answer_label)
        if answer.abstained:
            detail = "" if answer.text.strip() == ABSTENTION else f" {html.escape(answer.text)}"
            self.answer_label.setText(f"<b>Not found in your footage.</b>{detail}")
        else:
            self.answer_label.setText(html.escape(answer.text))
        if withdrawn := answer.extra.get("withdrawn"):
            self.answer_label.setText(
                f"{self.answer_label.text()}<br><i>(The first words, “{html.escape(withdrawn)}”, were withdrawn: "
                "the moments shown do not support them.)</i>"
            )
        self.answer_label.show()

    def _show_chips(self) -> None:
        """Chips for the selection's moments, in its order (the time-order toggle rearranges them)."""
        evidence, answer = self.selection.evidence, self.selection.answer
        cited = set(answer.cited) if answer else set()
        if answer is None:
            title = f"Moments found ({len(evidence)}), by relevance"
        elif answer.abstained:
            title = "Moments looked at (none supports an answer)"
        else:
            title = f"Evidence ({len(evidence)} moments, ★ = cited)"
        for chip in self.chips:
            chip.deleteLater()
        self.chips = []
        self.evidence_title.setText(title)
        self.evidence_title.setVisible(bool(evidence))
        self.time_order.setVisible(len(evidence) > 1)
        for i, ev in enumerate(evidence):
            chip = EvidenceChip(i, ev, self.thumbnail_for(ev), ev.unit_id in cited, self.chip_box)
            chip.clicked.connect(self.selection.select)
            chip.keep_requested.connect(
                lambda action, _i, ev=ev: self.keep_requested.emit(action, ev.footage_id, ev.start, ev.end)
            )
            self.chips.append(chip)
        self._arrange_chips()

    def _arrange_chips(self) -> None:
        """Lay the chips out in the answer's order (cited first, then by relevance) or in time order."""
        chips = sorted(self.chips, key=lambda c: (c.evidence.start, c.index)) if self.time_order.isChecked() else self.chips
        for chip in chips:
            self.chip_layout.removeWidget(chip)
            self.chip_layout.insertWidget(self.chip_layout.count() - 1, chip)

    def _mark_picked(self, index: int | None) -> None:
        for chip in self.chips:
            chip.set_selected(chip.index == index)

    # -- history (per library: the QSettings file lives in the library folder) ------------------

    def _load_history(self) -> None:
        try:
            entries = json.loads(self.store.value(HISTORY_KEY, "[]"))
        except (TypeError, ValueError):
            entries = []
        self.history.clear()
        for entry in entries:
            item = QListWidgetItem(f"{entry['q']}  →  {entry['a']}")
            item.setToolTip(f"Asked {fmt_moment(entry['at'])}\n{entry['a']}")
            item.setData(Qt.ItemDataRole.UserRole, entry)
            self.history.addItem(item)

    def history_entries(self) -> list[dict]:
        return [self.history.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.history.count())]

    def _remember(self, answer: Answer) -> None:
        text = ("(not found) " if answer.abstained else "") + answer.text
        entry = {
            "q": answer.question or self.question.text().strip(),
            "a": text[:300],
            "at": now_ts(),
            "options": self.option_list(),
        }
        entries = [entry] + [e for e in self.history_entries() if e["q"] != entry["q"]]
        self.store.setValue(HISTORY_KEY, json.dumps(entries[:HISTORY_MAX]))
        self._load_history()

    def _from_history(self, item: QListWidgetItem) -> None:
        entry = item.data(Qt.ItemDataRole.UserRole)
        self.question.setText(entry["q"])
        self.options.setPlainText("\n".join(entry.get("options") or []))
        self.options_section.set_expanded(bool(entry.get("options")))


def _active(task: Task | None) -> bool:
    """The task waits for its turn or runs."""
    return task is not None and task.state in ("pending", "running")
