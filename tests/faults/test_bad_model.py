"""A model file whose sha256 is not the manifest's (one byte flipped in the embedder's tokenizer): the
memory stage that loads it fails naming the model and the fix, nothing stored is lost, and with the
model repaired a resume completes the library exactly. (`egodesk doctor` on the same damage:
tests/test_doctor.py::test_a_flipped_byte_fails_that_model_by_name.)"""

from __future__ import annotations

import os
import shutil

import pytest

from egodesk.core.manifest import load_manifest
from egodesk.core.paths import bundled_models_dir
from tests.faults.harness import assert_resumes, assert_same, fault_env, job_states, snapshot, worker

pytestmark = pytest.mark.faults


def models_with_a_flipped_byte(folder, role: str = "embedder", name: str = "tokenizer.json"):
    """The installed models, linked, but `role`/`name` a copy with one byte changed (same size)."""
    folder.mkdir()
    for spec in load_manifest().values():
        source = bundled_models_dir() / spec.role
        if spec.role != role:
            os.symlink(source, folder / spec.role)
            continue
        (folder / role).mkdir(parents=True)
        for item in source.iterdir():
            if item.name != name:
                os.symlink(item, folder / role / item.name)
        data = bytearray((source / name).read_bytes())
        data[len(data) // 2] ^= 0x01
        (folder / role / name).write_bytes(bytes(data))
    return folder


def test_wrong_sha256_fails_the_stage_by_name_then_resumes(tmp_path, reference, llm_server):
    root = reference.copy_at("memory-parent:start", tmp_path / "lib")
    before = snapshot(root)
    models = models_with_a_flipped_byte(tmp_path / "models")
    ran = worker(root, fault_env(llm_server.url, EGODESK_MODELS=str(models)))
    assert ran.code == 0, ran
    state, error = job_states(root)["memory-parent"]
    assert state == "failed" and "model 'embedder' is missing or damaged" in error, error
    assert "./setup.sh" in error and "egodesk models install" in error  # the fix
    assert "failed: ModelMissing: model 'embedder'" in ran.out
    assert_same(snapshot(root), before, "after the refused model vs before it", but=("job",))

    shutil.rmtree(models)
    assert_resumes(root, llm_server.url, reference.final, "resumed with the repaired model vs the uninterrupted run")
