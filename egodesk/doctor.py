"""`egodesk doctor`: check the installation and say how to fix what is wrong.

Each check returns a `Check` (name, ok, required, detail, fix). Checks that could crash the process
(a llama.cpp build with unsupported CPU instructions dies of SIGILL) or need Qt run in a child process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

from egodesk import __version__
from egodesk.core.manifest import check_role, load_manifest
from egodesk.core.paths import LibraryPaths, project_root

MIN_FREE_BYTES = 2 * 1024**3
SETUP_FIX = "run ./setup.sh"


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def check_python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    return Check(
        "python",
        sys.version_info >= (3, 11),
        f"egodesk {__version__}, Python {version} at {sys.executable}",
        "use Python 3.11 or newer",
    )


def check_packages() -> Check:
    wrong = []
    requirements = project_root() / "requirements.txt"
    pins = [line.split("==") for line in requirements.read_text().splitlines() if "==" in line and not line.startswith("#")]
    pins += [["llama-cpp-python", "0.3.36"], ["rapidocr-onnxruntime", "1.4.4"]]
    for name, wanted in pins:
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = "missing"
        if have != wanted.strip():
            wrong.append(f"{name} {have} (want {wanted.strip()})")
    for conflicting in ("opencv-python",):  # the GUI build of OpenCV carries a second Qt
        try:
            wrong.append(f"{conflicting} {metadata.version(conflicting)} installed (conflicts with opencv-python-headless)")
        except metadata.PackageNotFoundError:
            pass
    detail = f"{len(pins)} pinned packages" + (": " + "; ".join(wrong) if wrong else " as pinned")
    return Check("packages", not wrong, detail, SETUP_FIX)


def check_ffmpeg() -> Check:
    missing = [tool for tool in ("ffmpeg", "ffprobe") if shutil.which(tool) is None]
    if missing:
        return Check("ffmpeg", False, f"not found: {', '.join(missing)}", "apt-get install ffmpeg (./setup.sh does this)")
    first = subprocess.run(["ffmpeg", "-version"], capture_output=True, text=True, timeout=30).stdout.splitlines()[0]
    return Check("ffmpeg", True, first)


def check_qt_multimedia() -> Check:
    """Can a QMediaPlayer load a real video? Run in a child process with the offscreen platform."""
    if shutil.which("ffmpeg") is None:
        return Check("qt-multimedia", False, "needs ffmpeg to make a test video", "apt-get install ffmpeg")
    with tempfile.TemporaryDirectory() as tmp:
        video = Path(tmp) / "probe.mp4"
        subprocess.run(
            [
                "ffmpeg",
                "-v",
                "error",
                "-f",
                "lavfi",
                "-i",
                "testsrc=size=160x120:rate=10:duration=1",
                "-pix_fmt",
                "yuv420p",
                str(video),
            ],
            check=True,
            timeout=60,
        )
        result = subprocess.run(
            [sys.executable, "-m", "egodesk.gui.media_check", str(video)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        )
    line = (result.stdout.strip().splitlines() or ["no output"])[-1]
    ok = result.returncode == 0
    fix = "install the Qt runtime libraries (libpulse0, libegl1, libxkbcommon0 ...: ./setup.sh)"
    return Check("qt-multimedia", ok, line if ok else f"{line} {result.stderr.strip()[-300:]}", fix)


def check_models(user_models: Path | None) -> list[Check]:
    checks = []
    for spec in load_manifest().values():
        if not spec.files:
            checks.append(_check_package_model(spec))
            continue
        found = check_role(spec, user_models, full=True)
        detail = f"{spec.upstream} in {found.folder}" if found.ok else found.problems
        checks.append(
            Check(
                f"model {spec.role}",
                found.ok,
                detail,
                f"{SETUP_FIX} (re-assembles and re-verifies the model files)",
                spec.required,
            )
        )
    return checks


def _check_package_model(spec) -> Check:
    try:
        import rapidocr_onnxruntime

        folder = Path(rapidocr_onnxruntime.__file__).parent / "models"
        count = len(list(folder.glob("*.onnx")))
        return Check(f"model {spec.role}", count >= 3, f"{count} ONNX models in {folder}", SETUP_FIX, spec.required)
    except ImportError as exc:
        return Check(f"model {spec.role}", False, str(exc), SETUP_FIX, spec.required)


def check_llama_cpp(user_models: Path | None) -> Check:
    """One real token from the llm-test model, in a child process so an illegal instruction is a failed
    check rather than a crash."""
    from egodesk.core.manifest import ModelMissing, locate_file

    try:
        model = locate_file("llm-test", user_models)
    except ModelMissing as exc:
        return Check("llama.cpp", False, str(exc), SETUP_FIX)
    code = (
        "import sys; from llama_cpp import Llama; m = Llama(sys.argv[1], n_ctx=256, n_threads=1, verbose=False); "
        "r = m.create_completion('Hello', max_tokens=1, temperature=0); print(repr(r['choices'][0]['text']))"
    )
    try:
        result = subprocess.run([sys.executable, "-c", code, str(model)], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return Check("llama.cpp", False, "one token took over 120 s", SETUP_FIX)
    if result.returncode == -4:
        return Check(
            "llama.cpp",
            False,
            "the build uses CPU instructions this machine lacks (SIGILL)",
            "rebuild: rm ~/.cache/egodesk/wheels/llama_cpp_python-*.whl && ./setup.sh",
        )
    if result.returncode != 0:
        return Check("llama.cpp", False, result.stderr.strip()[-300:], SETUP_FIX)
    import llama_cpp

    return Check("llama.cpp", True, f"llama-cpp-python {llama_cpp.__version__}: 1 token {result.stdout.strip()}")


def check_disk(paths: LibraryPaths) -> Check:
    folder = paths.root
    while not folder.exists():
        folder = folder.parent
    free = shutil.disk_usage(folder).free
    return Check(
        "disk",
        free >= MIN_FREE_BYTES,
        f"{free / 1024**3:.1f} GiB free at {paths.root}",
        f"free at least {MIN_FREE_BYTES / 1024**3:.0f} GiB or move the library (EGODESK_HOME)",
    )


def run_checks(paths: LibraryPaths) -> list[Check]:
    user_models = paths.user_models
    return [
        check_python(),
        check_packages(),
        check_ffmpeg(),
        check_qt_multimedia(),
        *check_models(user_models),
        check_llama_cpp(user_models),
        check_disk(paths),
    ]


def as_dicts(checks: list[Check]) -> list[dict]:
    return [asdict(c) for c in checks]


def healthy(checks: list[Check]) -> bool:
    return all(c.ok for c in checks if c.required)
