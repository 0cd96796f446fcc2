#!/usr/bin/env bash
# Screenshots of the real app: scripts/screenshots.sh OUT_DIR
# Starts egodesk under Xvfb on a fresh sample library (the walk video with the JFK speech as its sound
# track, and a damaged file), imports them through the import dialog, asks a question with the
# small test LLM, and saves PNGs of the import dialog mid-ingest, the main window with the answer, the
# settings dialog and the model manager. EGODESK_LLM_MODEL overrides the model (default llm-test).
set -euo pipefail
OUT="${1:?usage: scripts/screenshots.sh OUT_DIR}"
cd "$(dirname "$0")/.."
REPO="$PWD"
MEDIA="${EGODESK_SHARED:-$REPO/../shared}/media"
mkdir -p "$OUT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/footage"
ffmpeg -v error -y -i "$MEDIA/gopro_max-heromode.mp4" -i "$MEDIA/whisper_jfk.flac" -map 0:v:0 -map 1:a:0 \
    -c:v copy -c:a aac -shortest "$WORK/footage/DAY1_11094208_walk_speech.mp4"
printf 'this is not a video' > "$WORK/footage/DAY1_12000000_damaged.mp4"  # shows a per-file error
export EGODESK_HOME="$WORK/library" QT_QPA_PLATFORM=xcb QT_API=pyside6
export EGODESK_LLM_MODEL="${EGODESK_LLM_MODEL:-llm-test}" EGODESK_THREADS="${EGODESK_THREADS:-2}"
export QT_LOGGING_RULES="qt.multimedia.ffmpeg*=false"
xvfb-run -a -s "-screen 0 1600x1000x24" \
    "$REPO/.venv/bin/python" "$REPO/scripts/screenshots.py" "$OUT" "$WORK/footage"
ls -l "$OUT"
