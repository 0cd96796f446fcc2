import subprocess
import sys

from egodesk import __version__


def test_version():
    result = subprocess.run([sys.executable, "-m", "egodesk", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and __version__ in result.stdout


def test_models_list_json():
    import json

    result = subprocess.run([sys.executable, "-m", "egodesk", "models", "list", "--json"], capture_output=True, text=True)
    rows = json.loads(result.stdout)
    assert result.returncode == 0 and all(r["ok"] for r in rows)
    assert {r["role"] for r in rows} >= {"llm-quality", "asr", "embedder", "tagger"}
