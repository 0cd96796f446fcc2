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


def test_a_file_given_instead_of_a_subcommand_opens_the_app_on_it():
    from egodesk.cli import build_parser, split_files

    parser = build_parser()
    assert split_files(parser, ["/videos/walk.mp4"]) == ([], ["/videos/walk.mp4"])  # the desktop entry's %F
    assert split_files(parser, ["--library", "/lib", "a.mp4", "b.mp4"]) == (["--library", "/lib"], ["a.mp4", "b.mp4"])
    assert split_files(parser, ["--library=/lib", "a.mp4"]) == (["--library=/lib"], ["a.mp4"])
    assert split_files(parser, ["import", "a.mp4"]) == (["import", "a.mp4"], [])  # a subcommand wins
    assert split_files(parser, ["--library", "/lib"]) == (["--library", "/lib"], [])  # the app alone
    assert split_files(parser, []) == ([], [])
