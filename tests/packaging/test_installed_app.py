"""The installed package, as a user gets it: `packaging/build.sh` builds the .debs (or a build newer
than every source file is reused), `dpkg -x` unpacks the app and the models into a temporary root, and
the app runs from there with a clean HOME, no .venv on PATH and no source tree to import: doctor, an
import of the sample clip, a question with llm-test, and the window playing and seeking the video.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from egodesk import __version__
from tests.conftest import REPO

# the first test also waits for the build (~15 min on 2 cores)
pytestmark = [pytest.mark.packaging, pytest.mark.timeout(3600)]

DIST = REPO / "dist"
APP_DEB = DIST / f"egodesk_{__version__}_amd64.deb"
MODELS_DEB = DIST / f"egodesk-models_{__version__}_all.deb"
TARBALL = DIST / f"egodesk-{__version__}-linux-x86_64.tar.gz"
SOURCES = [REPO / "egodesk", REPO / "packaging", REPO / "resources", REPO / "models" / "manifest.toml", REPO / "requirements.txt"]
QUESTION = "What did the speaker ask his fellow Americans?"
WINDOW_CHECK = Path(__file__).with_name("window_check.py")


def newest_source_mtime() -> float:
    files = [p for s in SOURCES for p in ([s] if s.is_file() else s.rglob("*")) if p.is_file() and "__pycache__" not in p.parts]
    return max(p.stat().st_mtime for p in files)


@pytest.fixture(scope="module")
def packages() -> list[Path]:
    outputs = [APP_DEB, MODELS_DEB, TARBALL]
    if not all(p.is_file() and p.stat().st_mtime > newest_source_mtime() for p in outputs):
        started = time.monotonic()
        subprocess.run([str(REPO / "packaging" / "build.sh")], check=True, timeout=3600)
        print(f"packaging/build.sh took {time.monotonic() - started:.0f} s")
    return outputs


@pytest.fixture(scope="module")
def installed(packages, tmp_path_factory):
    """The two .debs unpacked into a root of their own; removed (the ~3 GB) afterwards."""
    base = tmp_path_factory.mktemp("installed")
    root = base / "root"
    for deb in packages[:2]:
        subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
    home = base / "home"
    home.mkdir()
    yield root, home
    shutil.rmtree(base)


def app_env(home: Path) -> dict[str, str]:
    """What a user's session has: no egodesk, Python or test variables, none of the checkout on PATH."""
    keep = {
        k: v for k, v in os.environ.items() if not k.startswith(("EGODESK_", "PYTHON", "XDG_", "VIRTUAL_ENV", "QT_", "PYTEST"))
    }
    return {
        **keep,
        "HOME": str(home),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "QT_QPA_PLATFORM": "offscreen",
        # the tiny real LLM, and no LLM-built memories, as in the default suite: the packaging is under test
        "EGODESK_LLM_MODEL": "llm-test",
        "EGODESK_MEMORY_RECORDS": "false",
        "EGODESK_MEMORY_ATOMIC": "false",
    }


def egodesk(installed, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    root, home = installed
    return subprocess.run(
        [str(root / "opt/egodesk/egodesk"), *args], capture_output=True, text=True, env=app_env(home), cwd=home, timeout=timeout
    )


def test_the_package_and_the_app_agree_on_the_version(packages, installed):
    for deb in packages[:2]:
        field = subprocess.run(["dpkg-deb", "-f", str(deb), "Version"], capture_output=True, text=True, check=True)
        assert field.stdout.strip() == __version__
    result = egodesk(installed, "--version")
    assert result.returncode == 0 and result.stdout.strip() == f"egodesk {__version__}"
    depends = subprocess.run(["dpkg-deb", "-f", str(packages[0]), "Depends"], capture_output=True, text=True).stdout
    assert "ffmpeg" in depends and "libc6 (>= " in depends
    assert f"egodesk-models (= {__version__})" in depends


def test_the_app_bundles_llama_cpp_for_any_avx2_cpu(installed):
    """The app is built on a machine whose own llama.cpp may use AVX-512 (setup.sh builds for its CPU);
    the bundled one must not, or the app stops with SIGILL on a CPU without it."""
    root, _ = installed
    libraries = sorted((root / "opt/egodesk").rglob("libggml-cpu.so*"))
    assert libraries
    for library in libraries:
        code = subprocess.run(["objdump", "-d", str(library)], capture_output=True, text=True, check=True).stdout
        assert "%zmm" not in code, f"{library.name} holds AVX-512 instructions"


def test_the_app_runs_its_own_code_not_the_checkout(installed):
    root, _ = installed
    result = egodesk(installed, "-c", "import egodesk, sys; print(egodesk.__file__); print(sys.executable)")
    assert result.returncode == 0, result.stderr
    module, executable = result.stdout.split()
    assert Path(module).is_relative_to(root / "opt/egodesk") and Path(executable) == root / "opt/egodesk/egodesk"


def test_doctor_is_all_green(installed):
    root, _ = installed
    result = egodesk(installed, "doctor", "--json")
    report = json.loads(result.stdout)
    failed = [c for c in report["checks"] if not c["ok"]]
    assert result.returncode == 0 and report["ok"] and not failed, failed
    models = {c["name"]: c["detail"] for c in report["checks"] if c["name"].startswith("model ")}
    assert models and all(str(root / "opt/egodesk") in detail for detail in models.values())
    [python] = [c for c in report["checks"] if c["name"] == "python"]
    assert python["detail"].startswith(f"egodesk {__version__}, ")


@pytest.fixture(scope="module")
def indexed_library(installed, composite_clip) -> Path:
    """The sample clip (walk video + speech) imported by the installed app into its default library."""
    result = egodesk(installed, "import", str(composite_clip), "--wait")
    assert result.returncode == 0, result.stderr[-2000:]
    footage = json.loads(egodesk(installed, "footage", "--json").stdout)
    assert [f["state"] for f in footage] == ["indexed"]
    return installed[1] / ".local/share/egodesk"


def test_ask_with_llm_test(installed, indexed_library):
    result = egodesk(installed, "ask", QUESTION, "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    answer = json.loads(result.stdout)
    assert answer["evidence"] and answer["text"].strip()


def test_window_asks_plays_and_seeks(installed, indexed_library):
    result = egodesk(installed, "-c", WINDOW_CHECK.read_text(), str(indexed_library), QUESTION, str(time.time()))
    assert result.returncode == 0, result.stderr[-3000:]
    window = json.loads(result.stdout.strip().splitlines()[-1])
    assert window["title"].startswith(f"egodesk {__version__}")
    assert window["about"] == f"{__version__} (installed app in {installed[0] / 'opt/egodesk'})"
    assert window["answer_evidence"] > 0 and window["played_to_s"] > 0.5
    assert abs(window["frame_s"] - window["sought_s"]) <= 1 / window["fps"]
    print(f"installed app: window shown {window['shown_s']} s after start; {window}")


def test_window_from_the_source_install(indexed_library, tmp_path):
    """The same window check from the checkout's .venv: its start time is the figure beside the app's."""
    env = {**app_env(tmp_path), "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, str(WINDOW_CHECK), str(indexed_library), QUESTION, str(time.time())],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    window = json.loads(result.stdout.strip().splitlines()[-1])
    print(f"source install: window shown {window['shown_s']} s after start")
