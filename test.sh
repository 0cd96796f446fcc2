#!/usr/bin/env bash
# Runs the test suite in the project's virtual environment; arguments pass on to pytest.
# Default: everything but the slow real-model tests (`./test.sh -m slow` runs those).
set -euo pipefail
cd "$(dirname "$0")"
export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}" QT_API=pyside6 PYTHONDONTWRITEBYTECODE=1
exec .venv/bin/python -m pytest "$@"
