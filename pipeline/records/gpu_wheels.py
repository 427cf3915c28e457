"""The Python packages a lent GPU machine lacks, carried to it as wheels.

    python -m pipeline.gpu_wheels download [DIR]     # here, with PyPI: the wheels into DIR (.whl)
    python -m pipeline.gpu_wheels install DIR TARGET  # there: into TARGET (for PYTHONPATH), checked

The lent machines (DEVELOPERS.md, GPU; CONTRIBUTING, GPU records) run Python 3.12 with PyTorch,
JAX and NumPy, and reach no package registry. They lack Keras and FlashRNN (the RNN kernels
snippets/benchmarks/rnn_alternatives.py compares with cuDNN): CARRIED is each at the release
requirements.txt pins, with those of their requirements the machine's image does not hold
(ON_THE_MACHINE, from the image's package list), each at its pin. `install` installs them with
pip (no index, no dependencies) and then checks that every requirement of the installed Keras
and FlashRNN (NEEDS_CHECKED) is met, naming what is not.
"""
from __future__ import annotations

import argparse
import importlib.metadata as md
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CARRIED = ("keras", "namex", "optree", "flashrnn")
NEEDS_CHECKED = ("keras", "flashrnn")  # the packages whose requirements install() checks
# Their other requirements, in the lent machines' image ('cuda': the device tool's package list,
# read 2026-11-17): carrying them would shadow the image's own builds.
ON_THE_MACHINE = ("absl-py", "h5py", "ml-dtypes", "numpy", "packaging", "rich",
                  "torch", "triton", "einops", "ninja")
PYTHON_VERSION = "3.12"  # the lent machines' Python
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64")


class WheelError(Exception):
    """What is wrong, in one line."""


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(requirements: Path = ROOT / "requirements.txt") -> dict[str, str]:
    """{name: version} of every `name==version` line."""
    found = {}
    for line in requirements.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==([^\s;#]+)", line)
        if m:
            found[_norm(m.group(1))] = m.group(2)
    return found


def carried(requirements: Path = ROOT / "requirements.txt") -> list[str]:
    """["keras==3.15.1", ...]: what travels, at the project's pins."""
    pinned = pins(requirements)
    missing = [name for name in CARRIED if name not in pinned]
    if missing:
        raise WheelError(f"requirements.txt pins no release of {', '.join(missing)}")
    return [f"{name}=={pinned[name]}" for name in CARRIED]


def _applies(marker: str, platform: str = "linux") -> bool:
    """Whether a requirement's marker holds on a lent machine (Linux): an extra's never; a
    `sys_platform == / != "..."` one as written; any other, yes."""
    if "extra" in marker:
        return False
    m = re.fullmatch(r"\s*sys_platform\s*(==|!=)\s*[\"']([^\"']+)[\"']\s*", marker)
    return m is None or (m.group(2) == platform) == (m.group(1) == "==")


def requirements_of(dist: md.Distribution) -> list[str]:
    """A distribution's requirements on a lent machine (Linux, no extras), by name."""
    names = []
    for req in dist.requires or []:
        if ";" in req and not _applies(req.split(";", 1)[1]):
            continue
        names.append(_norm(re.split(r"[\s<>=!~;\[(]", req, maxsplit=1)[0]))
    return names


def download(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
           "--only-binary=:all:", "--python-version", PYTHON_VERSION, "--implementation", "cp",
           *(a for p in PLATFORMS for a in ("--platform", p)), "-d", str(folder), *carried()]
    if subprocess.run(cmd).returncode != 0:
        raise WheelError("pip download failed (above); it needs PyPI")
    return sorted(folder.glob("*.whl"))


def wheel_files(folder: Path) -> list[Path]:
    """One wheel for each carried package, at its pin; a missing or extra one is an error."""
    if not folder.is_dir():
        raise WheelError(f"{folder}: no such folder (python -m pipeline.gpu_wheels download)")
    wheels = sorted(folder.glob("*.whl"))
    by_name = {}
    for w in wheels:
        name, version = w.name.split("-")[:2]
        by_name.setdefault(_norm(name), []).append((version, w))
    found = []
    for spec in carried():
        name, version = spec.split("==")
        have = by_name.pop(name, [])
        if [v for v, _ in have] != [version]:
            raise WheelError(f"{folder}: wants one wheel of {spec}, has "
                             f"{', '.join(w.name for _, w in have) or 'none'}")
        found.append(have[0][1])
    if by_name:
        raise WheelError(f"{folder}: wheels of nothing carried: {', '.join(sorted(by_name))}")
    return found


def install(folder: Path, target: Path, log=print) -> None:
    """The carried wheels into `target`, then a check that the installed Keras and FlashRNN
    have every requirement they name (on Linux), from `target` or the machine."""
    wheels = wheel_files(folder)
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
           "--no-compile", "--no-cache-dir", "--upgrade", "--target", str(target),
           *map(str, wheels)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["no output"])[-1]
        raise WheelError(f"pip could not install the wheels: {last}")
    path = [str(target)] + sys.path
    found, absent, installed = [], [], []
    for top in NEEDS_CHECKED:
        dist = next(iter(md.distributions(name=top, path=[str(target)])), None)
        if dist is None:
            raise WheelError(f"{target}: {top} is not there after pip installed the wheels")
        installed.append(dist)
        for name in requirements_of(dist):
            have = next(iter(md.distributions(name=name, path=path)), None)
            if have is None:
                absent.append(f"{dist.name} {dist.version} needs {name}")
            elif f"{name} {have.version}" not in found:
                found.append(f"{name} {have.version}")
    if absent:
        raise WheelError(f"{'; '.join(absent)}, neither carried nor on this machine: add it to "
                         "CARRIED in pipeline/records/gpu_wheels.py")
    keras = installed[0]
    log(f"wheels: Keras {keras.version} in {target}, with " + ", ".join(
        [f"{d.name} {d.version}" for d in installed[1:]] + found))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gpu_wheels", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    d = sub.add_parser("download", help="the carried wheels into DIR (needs PyPI)")
    d.add_argument("folder", nargs="?", type=Path, default=ROOT / ".whl")
    i = sub.add_parser("install", help="the wheels in DIR into TARGET, checked")
    i.add_argument("folder", type=Path)
    i.add_argument("target", type=Path)
    args = ap.parse_args(argv)
    try:
        if args.verb == "download":
            for w in download(args.folder):
                print(w.name)
        else:
            install(args.folder, args.target)
    except WheelError as e:
        print(f"gpu_wheels: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
