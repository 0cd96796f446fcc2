"""The model manager: the manifest's models (status, size, sha256 check, licence, show file), and adding
a model of one's own (a GGUF as LLM, a GGUF + mmproj as VLM, or an OpenAI-compatible server) with a
probe that runs it once and reports what it said."""

from __future__ import annotations

import tempfile
from pathlib import Path

from pydantic import ValidationError
from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QColor, QDesktopServices, QImage, QPainter
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from egodesk.core.manifest import check_role, load_manifest
from egodesk.core.settings import Settings
from egodesk.gui import ops
from egodesk.gui.tasks import TaskRunner
from egodesk.gui.widgets import message_label, show_message

COLUMNS = ("Role", "Model", "Size", "Status", "Licence")


def _size(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def probe_image(folder: Path) -> Path:
    """A small test picture for a VLM probe (drawn here: nothing is downloaded)."""
    image = QImage(320, 240, QImage.Format.Format_RGB32)
    image.fill(QColor("#87ceeb"))
    painter = QPainter(image)
    painter.fillRect(0, 170, 320, 70, QColor("#3a7d2c"))
    painter.setBrush(QColor("#d62828"))
    painter.drawEllipse(120, 90, 80, 80)
    painter.setPen(QColor("white"))
    painter.drawText(10, 30, "EXIT")
    painter.end()
    path = folder / "egodesk-probe.jpg"
    image.save(str(path), "JPG")
    return path


class ModelManager(QDialog):
    settings_changed = Signal(object)  # Settings to save

    def __init__(self, runner: TaskRunner, settings: Settings, user_models: Path, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("model-manager")
        self.setWindowTitle("Models")
        self.resize(1000, 620)
        self.runner, self.settings, self.user_models = runner, settings, user_models
        self.manifest = load_manifest()
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setObjectName("models-table")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.verify_button = QPushButton("Verify sha256", self)
        self.verify_button.setToolTip("Re-hash every model file against the manifest (takes a while for the large ones)")
        self.verify_button.clicked.connect(self.verify)
        show = QPushButton("Show file", self)
        show.clicked.connect(self.show_file)
        self.status = message_label("models-status", self)
        row = QHBoxLayout()
        row.addWidget(self.verify_button)
        row.addWidget(show)
        row.addStretch(1)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 2)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(self._build_add_box(), 1)
        layout.addWidget(close)
        self.refresh()

    # -- the manifest's models -------------------------------------------------------------------

    def refresh(self, full: dict[str, list[tuple[str, bool, str]]] | None = None) -> None:
        """Fill the table; `full` holds the results of a sha256 verification when one was run."""
        self.table.setRowCount(0)
        for role, spec in self.manifest.items():
            if full is not None:
                results = full.get(role, [])
                ok = all(r[1] for r in results)
                reason = "; ".join(r[2] for r in results if not r[1])
                status = "sha256 verified" if ok else f"damaged: {reason}"
            else:
                found = check_role(spec, self.user_models)
                ok = found.ok
                status = "ok (size and stamp)" if ok else found.problems
            row = self.table.rowCount()
            self.table.insertRow(row)
            cells = (
                role,
                spec.upstream,
                _size(spec.total_size) if spec.total_size else "bundled",
                status,
                spec.licence.split(";")[0].split(" (")[0],
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip({1: spec.description, 4: spec.licence}.get(column, text))
                if column == 3:
                    item.setForeground(QColor("#2e7d32") if ok else QColor("#d13438"))
                self.table.setItem(row, column, item)
        for column in (0, 2, 3, 4):
            self.table.resizeColumnToContents(column)

    def verify(self) -> None:
        self.verify_button.setEnabled(False)
        show_message(self.status, "Verifying sha256 of every model file…")

        def done(results) -> None:
            self.verify_button.setEnabled(True)
            bad = [role for role, rs in results.items() if not all(r[1] for r in rs)]
            show_message(
                self.status,
                f"Damaged or missing: {', '.join(bad)}. Run ./setup.sh (egodesk models install)."
                if bad
                else "Every model file matches its sha256.",
                "error" if bad else "info",
            )
            self.refresh(results)

        def failed(message: str) -> None:
            self.verify_button.setEnabled(True)
            show_message(self.status, f"Verification failed: {message}", "error")

        self.runner.run(
            ops.verify_models,
            str(self.user_models),
            label="Verify models",
            on_success=done,
            on_failure=failed,
            on_progress=lambda p: show_message(self.status, f"Verifying {p.message} ({p.done}/{p.total})…"),
        )

    def show_file(self) -> None:
        row = self.table.currentRow()
        if row < 0:
            show_message(self.status, "Select a model first.", "error")
            return
        found = check_role(self.manifest[self.table.item(row, 0).text()], self.user_models)
        folder = found.folder or (found.files[0].path.parent if found.files else None)
        if folder is None:
            show_message(self.status, "This model comes inside a Python package; it has no folder of its own.")
            return
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    # -- adding a model --------------------------------------------------------------------------

    def _build_add_box(self) -> QGroupBox:
        box = QGroupBox("Add a model", self)
        self.kind_group = QButtonGroup(box)
        kinds = QHBoxLayout()
        for i, (kind, text) in enumerate(
            (
                ("llm", "Language model (GGUF)"),
                ("vlm", "Vision-language model (GGUF + mmproj)"),
                ("server", "OpenAI-compatible server"),
            )
        ):
            radio = QRadioButton(text, box)
            radio.setProperty("kind", kind)
            radio.setChecked(i == 0)
            self.kind_group.addButton(radio, i)
            kinds.addWidget(radio)
        self.kind_group.idToggled.connect(lambda *_: self._kind_changed())
        self.model_path = QLineEdit(box)
        self.model_path.setObjectName("add-model-path")
        self.mmproj_path = QLineEdit(box)
        self.mmproj_path.setObjectName("add-mmproj-path")
        self.server_url = QLineEdit(self.settings.server_url, box)
        self.server_url.setObjectName("add-server-url")
        self.server_url.setPlaceholderText("http://127.0.0.1:8080/v1")
        self.server_model = QLineEdit(self.settings.server_model, box)
        self.form = QFormLayout()
        self.form.addRow("Model file", self._browse_row(self.model_path, box))
        self.form.addRow("Projector (mmproj)", self._browse_row(self.mmproj_path, box))
        self.form.addRow("Server URL", self.server_url)
        self.form.addRow("Server model name", self.server_model)
        self.probe_button = QPushButton("Probe", box)
        self.probe_button.setObjectName("probe")
        self.probe_button.setToolTip("Run the model once and report what it said")
        self.probe_button.clicked.connect(self.probe)
        self.use_button = QPushButton("Use this model", box)
        self.use_button.setObjectName("use-model")
        self.use_button.clicked.connect(self.use)
        self.probe_result = message_label("probe-result", box)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.probe_button)
        buttons.addWidget(self.use_button)
        layout = QVBoxLayout(box)
        layout.addLayout(kinds)
        layout.addLayout(self.form)
        layout.addWidget(self.probe_result)
        layout.addLayout(buttons)
        self._kind_changed()
        return box

    def _browse_row(self, edit: QLineEdit, parent: QWidget) -> QHBoxLayout:
        row = QHBoxLayout()
        row.addWidget(edit, 1)
        button = QPushButton("Browse…", parent)
        button.clicked.connect(lambda: self._browse(edit))
        row.addWidget(button)
        return row

    def _browse(self, edit: QLineEdit) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a GGUF file", "", "GGUF models (*.gguf);;All files (*)")
        if path:
            edit.setText(path)

    def kind(self) -> str:
        return self.kind_group.checkedButton().property("kind")

    def _kind_changed(self) -> None:
        kind = self.kind()
        for row, visible in enumerate((kind != "server", kind == "vlm", kind == "server", kind == "server")):
            self.form.setRowVisible(row, visible)  # rows in the order _build_add_box added them

    def _missing(self) -> str:
        kind = self.kind()
        if kind == "server":
            return (
                ""
                if self.server_url.text().strip().startswith(("http://", "https://"))
                else "Enter the server's URL (http://…/v1)."
            )
        if not Path(self.model_path.text().strip()).is_file():
            return "Choose the model's .gguf file."
        if kind == "vlm" and not Path(self.mmproj_path.text().strip()).is_file():
            return "Choose the projector (mmproj) .gguf file that belongs to this model."
        return ""

    def probe(self) -> None:
        missing = self._missing()
        if missing:
            show_message(self.probe_result, missing, "error")
            return
        kind = self.kind()
        self.probe_button.setEnabled(False)
        show_message(self.probe_result, "Running the model once…")

        def done(text: str) -> None:
            self.probe_button.setEnabled(True)
            show_message(self.probe_result, text)

        def failed(text: str) -> None:
            self.probe_button.setEnabled(True)
            show_message(self.probe_result, f"Probe failed: {text}", "error")

        if kind == "vlm":
            image = probe_image(Path(tempfile.gettempdir()))
            self.runner.run(
                ops.probe_vlm,
                self.model_path.text().strip(),
                self.mmproj_path.text().strip(),
                str(image),
                self.settings.threads,
                label="Probe model",
                on_success=done,
                on_failure=failed,
            )
        else:
            self.runner.run(
                ops.probe_llm,
                kind,
                self.model_path.text().strip(),
                self.server_url.text().strip(),
                self.server_model.text().strip(),
                self.settings.threads,
                label="Probe model",
                on_success=done,
                on_failure=failed,
            )

    def use(self) -> None:
        """Point the settings at the added model (saved by the window)."""
        missing = self._missing()
        if missing:
            show_message(self.probe_result, missing, "error")
            return
        kind = self.kind()
        if kind == "server":
            changes = {
                "llm_backend": "server",
                "server_url": self.server_url.text().strip(),
                "server_model": self.server_model.text().strip(),
            }
        elif kind == "vlm":
            changes = {
                "captioner": "vlm",
                "vlm_model_path": self.model_path.text().strip(),
                "vlm_mmproj_path": self.mmproj_path.text().strip(),
            }
        else:
            changes = {"llm_backend": "local", "llm_model_path": self.model_path.text().strip()}
        try:
            self.settings = Settings.model_validate({**self.settings.model_dump(), **changes})
        except ValidationError as exc:
            show_message(self.probe_result, f"Not saved: {exc.errors()[0]['msg']}", "error")
            return
        self.settings_changed.emit(self.settings)
        show_message(self.probe_result, "Saved: " + ", ".join(f"{k} = {v}" for k, v in changes.items()))
