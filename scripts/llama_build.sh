# Sourced by setup.sh and packaging/build.sh: the flags llama-cpp-python is built with and its wheel,
# built once per flag set (about 10 minutes on 2 cores) and kept outside the repo. Needs PY and say().
#
# -march=native would emit AMX code that some virtual machines advertise but do not execute (SIGILL), so the
# flags are named. `portable` runs on any x86-64 with AVX2: what the packaged app bundles for other machines.
# `native` adds AVX-512 where this CPU runs it (the kernel lists it in /proc/cpuinfo only when it saves that
# state): llama.cpp's Q4_K prompt kernels have a 512-bit path, and llm-quality reads a prompt at ~106
# tokens/s instead of ~71 on 2 cores (generation is memory-bound: ~14 tokens/s either way).
LLAMA_VERSION=0.3.36
LLAMA_WHEELS="${EGODESK_SETUP_CACHE:-$HOME/.cache/egodesk}/wheels"
LLAMA_PORTABLE_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
LLAMA_STAMP=.venv/.egodesk-llama  # the build installed in .venv: "version flags"

llama_flags() {  # native | portable
  local flags="$LLAMA_PORTABLE_FLAGS" cpu
  if [ "$1" = native ]; then
    cpu=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
    _has() { [[ "$cpu" == *" $1 "* ]]; }
    if _has avx512f && _has avx512cd && _has avx512vl && _has avx512dq && _has avx512bw; then
      flags+=" -DGGML_AVX512=ON"
      if _has avx512vbmi; then flags+=" -DGGML_AVX512_VBMI=ON"; fi
      if _has avx512_vnni; then flags+=" -DGGML_AVX512_VNNI=ON"; fi
      if _has avx512_bf16; then flags+=" -DGGML_AVX512_BF16=ON"; fi
    fi
    if _has avx_vnni; then flags+=" -DGGML_AVX_VNNI=ON"; fi
  fi
  echo "$flags"
}

llama_build() {  # native | portable: what the stamp holds for that build
  echo "$LLAMA_VERSION $(llama_flags "$1")"
}

llama_installed() {  # native | portable: whether .venv holds that build
  [ "$(cat "$LLAMA_STAMP" 2>/dev/null)" = "$(llama_build "$1")" ] \
    && $PY -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$LLAMA_VERSION')" 2>/dev/null
}

llama_install() {  # native | portable: install that build into .venv (building its wheel once)
  local flags wheels wheel
  flags=$(llama_flags "$1")
  wheels="$LLAMA_WHEELS/llama-$(echo "$LLAMA_VERSION $flags" | sha256sum | cut -c1-12)"
  mkdir -p "$wheels"
  wheel=$(ls "$wheels"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null | head -1 || true)
  if [ -z "$wheel" ]; then
    say "building llama-cpp-python $LLAMA_VERSION, $1 ($flags; about 10 minutes on 2 cores)"
    CMAKE_ARGS="$flags" $PY -m pip wheel -q --no-cache-dir --no-deps -w "$wheels" \
      "llama-cpp-python==$LLAMA_VERSION" 2>&1 | grep -v '^WARNING: Location' || true
    wheel=$(ls "$wheels"/llama_cpp_python-"$LLAMA_VERSION"-*.whl | head -1)
  fi
  say "installing $(basename "$wheel") ($1)"
  $PY -m pip install -q --no-deps --force-reinstall "$wheel" 2>&1 | grep -v '^WARNING: Location' || true
  llama_build "$1" > "$LLAMA_STAMP"
}
