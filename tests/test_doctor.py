"""`egodesk doctor` on the real installation, and on a copy of the models with one byte flipped."""

import json
import os
import shutil
import subprocess
import sys

from egodesk.core.manifest import load_manifest
from egodesk.core.paths import bundled_models_dir


def doctor(env_extra: dict) -> tuple[int, dict]:
    env = {**os.environ, **env_extra}
    result = subprocess.run(
        [sys.executable, "-m", "egodesk", "doctor", "--json"], capture_output=True, text=True, env=env, timeout=300
    )
    return result.returncode, json.loads(result.stdout)


def test_every_required_check_passes_on_this_install(library):
    code, report = doctor({})
    failed = [c for c in report["checks"] if c["required"] and not c["ok"]]
    assert code == 0 and report["ok"] and not failed, failed
    names = {c["name"] for c in report["checks"]}
    assert {"python", "packages", "ffmpeg", "qt-multimedia", "llama.cpp", "disk", "model embedder"} <= names


def test_a_flipped_byte_fails_that_model_by_name(tmp_path, library):
    models = tmp_path / "models"
    for spec in load_manifest().values():
        for f in spec.files:
            (models / spec.role).mkdir(parents=True, exist_ok=True)
            os.symlink(bundled_models_dir() / spec.role / f.name, models / spec.role / f.name)
    victim = models / "embedder" / "tokenizer.json"
    victim.unlink()
    shutil.copyfile(bundled_models_dir() / "embedder" / "tokenizer.json", victim)
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x01
    victim.write_bytes(bytes(data))

    code, report = doctor({"EGODESK_MODELS": str(models)})
    by_name = {c["name"]: c for c in report["checks"]}
    assert code != 0 and not report["ok"]
    assert not by_name["model embedder"]["ok"] and "tokenizer.json" in by_name["model embedder"]["detail"]
    assert "setup.sh" in by_name["model embedder"]["fix"]
    assert by_name["model asr"]["ok"] and by_name["model llm-test"]["ok"]
