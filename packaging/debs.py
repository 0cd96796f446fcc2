"""Package the frozen app and the default models (run by packaging/build.sh with .venv's Python).

`debs.py app FROZEN_DIR OUT_DIR` writes egodesk_<version>_amd64.deb (the app in /opt/egodesk, the command
/usr/bin/egodesk, the desktop entry, its icon) and egodesk-<version>-linux-x86_64.tar.gz (the same app
folder). Its `Depends:` are computed, not listed by hand: the Debian packages owning every system
library the bundled ELF files link to and every system library PyInstaller copied into the app, libc6 at
the newest glibc symbol version they use, and ffmpeg, which egodesk runs as a program.

`debs.py models OUT_DIR` writes egodesk-models_<version>_all.deb: every file `models/manifest.toml`
lists, taken from where ./setup.sh assembled it after a full size + sha256 check, into
/opt/egodesk/models/<role>/ (where the installed app looks: egodesk.core.paths.bundled_models_dir).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from egodesk import __version__  # noqa: E402
from egodesk.core.manifest import check_file, load_manifest, read_stamp, write_stamp  # noqa: E402
from egodesk.core.paths import bundled_models_dir  # noqa: E402

INSTALL_DIR = Path("opt/egodesk")
MAINTAINER = "egodesk developers <egodesk@localhost>"
GLIBC = re.compile(r"GLIBC_(\d+)\.(\d+)")
SYSTEM_LIB_DIRS = (Path("/usr/lib/x86_64-linux-gnu"), Path("/lib/x86_64-linux-gnu"))


class PackagingError(Exception):
    pass


def run(*args: str, **kwargs) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True, **kwargs).stdout


def elf_files(folder: Path) -> list[Path]:
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with open(path, "rb") as handle:
                if handle.read(4) == b"\x7fELF":
                    found.append(path)
    return found


def system_libraries(app: Path, elves: list[Path]) -> tuple[set[str], list[str]]:
    """The libraries outside the app folder that its ELF files load, and those not found at all (a
    plugin for something this machine lacks, such as a database client: it is reported, not packaged)."""
    env = {**os.environ, "LD_LIBRARY_PATH": str(app / "_internal")}  # as the PyInstaller bootloader sets it
    outside, missing = set(), []
    for elf in elves:
        for line in run("ldd", str(elf), env=env).splitlines():
            if "=> not found" in line:
                missing.append(f"{elf.relative_to(app)}: {line.split()[0]}")
            elif "=>" in line and (target := line.split("=>")[1].split("(")[0].strip()):
                if not Path(target).resolve().is_relative_to(app.resolve()):
                    outside.add(target)
    return outside, missing


def copied_system_libraries(app: Path) -> set[str]:
    """The system libraries PyInstaller copied into the app (the same bytes as this machine's file).
    Their packages bring what those libraries read at run time and no ldd shows: fontconfig's fonts.conf,
    xkbcommon's keymaps, PulseAudio's client configuration."""
    copied = set()
    for library in sorted((app / "_internal").glob("*.so*")):
        for folder in SYSTEM_LIB_DIRS:
            system = folder / library.name
            if system.is_file() and filecmp.cmp(library, system, shallow=False):
                copied.add(str(system))
                break
    return copied


def owning_packages(libraries: set[str]) -> set[str]:
    """The Debian packages holding these files (dpkg knows a file by one of its /lib or /usr/lib names)."""
    packages = set()
    for library in sorted(libraries):
        names = {library, str(Path(library).resolve())}
        names |= {n.removeprefix("/usr") if n.startswith("/usr/lib") else "/usr" + n for n in list(names)}
        for name in sorted(names):
            result = subprocess.run(["dpkg", "-S", name], capture_output=True, text=True)
            if result.returncode == 0:
                packages.add(result.stdout.split(":")[0])
                break
        else:
            raise PackagingError(f"no Debian package owns {library}: the Depends would be incomplete")
    return packages


def newest_glibc(elves: list[Path]) -> tuple[int, int]:
    versions = {(0, 0)}
    for elf in elves:
        versions |= {(int(a), int(b)) for a, b in GLIBC.findall(run("objdump", "-T", str(elf)))}
    return max(versions)


def installed_size_kib(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink()) // 1024 + 1


def write_control(stage: Path, fields: dict[str, str]) -> None:
    control = stage / "DEBIAN" / "control"
    control.parent.mkdir(parents=True, exist_ok=True)
    control.write_text("".join(f"{key}: {value}\n" for key, value in fields.items()))


def build_deb(stage: Path, out: Path, level: str) -> Path:
    """dpkg-deb with zstd: fast at this size (the app is ~1 GB unpacked, the models ~2 GB)."""
    run("dpkg-deb", "--root-owner-group", "-Zzstd", f"-z{level}", "--build", str(stage), str(out))
    return out


def package_app(frozen: Path, out_dir: Path) -> list[Path]:
    if not (frozen / "egodesk").is_file():
        raise PackagingError(f"{frozen} holds no frozen egodesk (run PyInstaller first)")
    elves = elf_files(frozen)
    outside, missing = system_libraries(frozen, elves)
    for line in missing:
        print(f"[debs] not found on this machine (that plugin will not load): {line}", file=sys.stderr)
    glibc = ".".join(map(str, newest_glibc(elves)))
    depends = sorted(owning_packages(outside | copied_system_libraries(frozen)) - {"libc6"})
    print(f"[debs] {len(elves)} ELF files; newest glibc symbol {glibc}; system packages: {', '.join(depends)}", file=sys.stderr)

    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        stage = Path(tmp) / "root"
        shutil.copytree(frozen, stage / INSTALL_DIR, symlinks=True)
        (stage / "usr/bin").mkdir(parents=True)
        (stage / "usr/bin/egodesk").symlink_to("/" / INSTALL_DIR / "egodesk")
        desktop = stage / "usr/share/applications/egodesk.desktop"
        desktop.parent.mkdir(parents=True)
        shutil.copy(ROOT / "packaging/egodesk.desktop", desktop)
        icon = stage / "usr/share/icons/hicolor/scalable/apps/egodesk.svg"
        icon.parent.mkdir(parents=True)
        shutil.copy(ROOT / "resources/icons/egodesk.svg", icon)
        write_control(
            stage,
            {
                "Package": "egodesk",
                "Version": __version__,
                "Architecture": "amd64",
                "Maintainer": MAINTAINER,
                "Installed-Size": str(installed_size_kib(stage)),
                "Depends": ", ".join([f"libc6 (>= {glibc})", "ffmpeg", *depends, f"egodesk-models (= {__version__})"]),
                "Section": "video",
                "Priority": "optional",
                "Description": "personal video memory for wearable-camera footage\n"
                " Import your recorded footage; egodesk transcribes and describes it on this computer,\n"
                " builds memories in a local library and answers questions with the moments of video\n"
                " that support the answer. Nothing leaves your machine.",
            },
        )
        deb = build_deb(stage, out_dir / f"egodesk_{__version__}_amd64.deb", "3")
        tarball = out_dir / f"egodesk-{__version__}-linux-x86_64.tar.gz"
        # the folder is named with its version in the archive (S, H: link targets stay as they are)
        run("tar", "-C", str(stage / "opt"), f"--transform=s,^egodesk,egodesk-{__version__},SH", "-czf", str(tarball), "egodesk")
    return [deb, tarball]


def package_models(out_dir: Path) -> Path:
    source = bundled_models_dir()
    manifest = load_manifest()
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        stage = Path(tmp) / "root"
        roles = []
        for spec in manifest.values():
            if not spec.files:
                continue  # a model inside a Python package (OCR) ships in the app itself
            for file in spec.files:
                path = source / spec.role / file.name
                check = check_file(path, file, full=True)
                if not check.ok:
                    raise PackagingError(f"model {spec.role}: {path}: {check.reason} (run ./setup.sh)")
                target = stage / INSTALL_DIR / "models" / spec.role / file.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
                # whole seconds survive the .deb's tar, so the stamp written here still matches once
                # installed and the app need not rehash 2 GB at its first start
                seconds = int(path.stat().st_mtime)
                os.utime(target, ns=(seconds * 10**9, seconds * 10**9))
                # an exported file has no pinned hash: its stamp holds the one check_file just verified
                write_stamp(target, file.sha256 or read_stamp(path)["sha256"])
            roles.append(f" {spec.role}: {spec.upstream} ({spec.licence})")
        write_control(
            stage,
            {
                "Package": "egodesk-models",
                "Version": __version__,
                "Architecture": "all",
                "Maintainer": MAINTAINER,
                "Installed-Size": str(installed_size_kib(stage)),
                "Section": "video",
                "Priority": "optional",
                "Description": "default models of egodesk (verified by size and sha256)\n" + "\n".join(roles),
            },
        )
        return build_deb(stage, out_dir / f"egodesk-models_{__version__}_all.deb", "1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="debs.py", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    app = sub.add_parser("app", help="the app's .deb and .tar.gz")
    app.add_argument("frozen", type=Path, help="the PyInstaller one-folder output")
    app.add_argument("out", type=Path)
    models = sub.add_parser("models", help="the models' .deb")
    models.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        made = package_app(args.frozen, args.out) if args.what == "app" else [package_models(args.out)]
    except (PackagingError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or ""
        print(f"[debs] failed: {exc} {detail}".strip(), file=sys.stderr)
        return 1
    for path in made:
        print(f"[debs] {path} {path.stat().st_size / 1e6:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
