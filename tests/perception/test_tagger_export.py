"""The tagger's ONNX export gives the manifest's bytes whatever math library path the CPU takes.

MKL picks its kernels by CPU; `MKL_CBWR` forces one, standing in for a different machine. Folding
BatchNorm into the convolutions made the file's sha256 differ between these (and a fresh machine
failed `./setup.sh`); `run_exporter` raises when the export does not match the manifest.
"""

import pytest

from egodesk.core.manifest import load_manifest
from egodesk.core.model_install import default_cache, export_venv, fetch_wheels, run_exporter

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("mkl_branch", ["COMPATIBLE", "AVX2"])
def test_export_matches_the_manifest_on_any_kernel_path(tmp_path, monkeypatch, mkl_branch):
    if not (export_venv() / "bin" / "python").exists():
        pytest.skip("the export environment is made by ./setup.sh")
    (spec,) = [f for f in load_manifest()["tagger"].files if f.export]
    wheels = fetch_wheels(spec.inputs, default_cache(), print)
    monkeypatch.setenv("MKL_CBWR", mkl_branch)
    run_exporter(spec, tmp_path / spec.name, wheels)
    assert (tmp_path / spec.name).stat().st_size == spec.size
