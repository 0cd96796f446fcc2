"""The model manager (with a real probe of the small test LLM) and the Help dialogs."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton

from egodesk.core.manifest import load_manifest, locate_file

WAIT_MS = 180_000


def test_model_manager_lists_the_manifest_with_status_and_licence(qtbot, window):
    dialog = window.open_models()
    roles = [dialog.table.item(row, 0).text() for row in range(dialog.table.rowCount())]
    assert roles == list(load_manifest())
    llm_test = roles.index("llm-test")
    assert dialog.table.item(llm_test, 3).text().startswith("ok")
    assert dialog.table.item(llm_test, 4).text() == "Apache-2.0"
    dialog.reject()


def test_probing_a_missing_file_says_what_is_missing(qtbot, window):
    dialog = window.open_models()
    dialog.findChild(QLineEdit, "add-model-path").setText("/nowhere/model.gguf")
    dialog.findChild(QPushButton, "probe").click()
    result = dialog.findChild(QLabel, "probe-result")
    assert "Choose the model's .gguf file" in result.text()
    assert window.runner.tasks == []
    dialog.reject()


@pytest.mark.slow  # a real LLM run: seconds when the machine is idle, a minute under contention
def test_probe_runs_a_gguf_once_and_use_saves_it(qtbot, window):
    dialog = window.open_models()
    path = str(locate_file("llm-test"))
    dialog.findChild(QLineEdit, "add-model-path").setText(path)
    dialog.findChild(QPushButton, "probe").click()
    result = dialog.findChild(QLabel, "probe-result")
    qtbot.waitUntil(lambda: "answered in" in result.text() or "failed" in result.text(), timeout=WAIT_MS)
    assert "answered in" in result.text(), result.text()
    dialog.findChild(QPushButton, "use-model").click()
    assert window.library.settings.llm_model_path == path
    dialog.reject()


def test_server_url_must_look_like_one(qtbot, window):
    dialog = window.open_models()
    dialog.kind_group.button(2).setChecked(True)
    dialog.findChild(QLineEdit, "add-server-url").setText("localhost")
    dialog.findChild(QPushButton, "use-model").click()
    assert "server's URL" in dialog.findChild(QLabel, "probe-result").text()
    assert window.library.settings.llm_backend == "local"
    dialog.reject()


def test_help_dialogs_open(qtbot, window):
    from egodesk.gui.help import AboutDialog, LogDialog, about_html

    assert "llm-quality" in about_html() and "PySide6" in about_html()
    about = AboutDialog(window)
    about.open()
    about.accept()
    logs = LogDialog(window.library.paths.log_file, window)
    logs.open()
    logs.reject()
