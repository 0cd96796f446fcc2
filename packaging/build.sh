#!/usr/bin/env bash
# Build the installable egodesk from a checkout after ./setup.sh:
#   dist/egodesk_<version>_amd64.deb, dist/egodesk-<version>-linux-x86_64.tar.gz (the frozen one-folder
#   app, PyInstaller) and dist/egodesk-models_<version>_all.deb (the verified default models).
# `packaging/build.sh app` or `packaging/build.sh models` builds one half. See packaging/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
say() { printf '[build] %s\n' "$*"; }
[ -x "$PY" ] || { echo "packaging/build.sh: no .venv: run ./setup.sh first" >&2; exit 1; }
what="${1:-all}"
case "$what" in all|app|models) ;; *) echo "usage: packaging/build.sh [all|app|models]" >&2; exit 2;; esac
export PIP_DISABLE_PIP_VERSION_CHECK=1
mkdir -p dist

if [ "$what" != models ]; then
  started=$(date +%s)
  # The app runs on other machines: it bundles llama.cpp built for any x86-64 with AVX2, not for this CPU
  # (an AVX-512 build would stop with SIGILL where there is none). .venv gets its own build back after.
  source scripts/llama_build.sh
  if ! llama_installed portable; then
    llama_installed native && trap 'llama_install native' EXIT
    llama_install portable
  fi
  say "the pinned PyInstaller in .venv (packaging/requirements.txt; seconds when present)"
  $PY -m pip install -q -r packaging/requirements.txt 2>&1 | grep -v '^WARNING: Location' || true
  say "freezing the app with PyInstaller (build/pyinstaller)"
  $PY -m PyInstaller --noconfirm --clean --log-level WARN --distpath build/pyinstaller/dist \
    --workpath build/pyinstaller/work packaging/egodesk.spec
  $PY packaging/debs.py app build/pyinstaller/dist/egodesk dist
  say "app packaged in $(( $(date +%s) - started )) s"
fi

if [ "$what" != app ]; then
  started=$(date +%s)
  $PY packaging/debs.py models dist
  say "models packaged in $(( $(date +%s) - started )) s"
fi
