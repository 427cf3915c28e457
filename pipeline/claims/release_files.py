"""The recurrent-layer files of each library, and their content hashes, read from a package's
files wherever they are: a published wheel (pipeline/claims/release_changes_gen.py, at dev time)
or an installed package (the project's environment, the version matrix's environments under
.cache/versions/envs/), so a test can re-hash whatever releases are present here, with no network.

A file is named by its path under the library's package folder with the package's own prefix
dropped (`layers/rnn/lstm.py` for keras/src/layers/rnn/lstm.py), the same in every release.
Tests of the library (`*_test.py`) are not its code and are left out.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import re
from fnmatch import fnmatch
from pathlib import Path

from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parents[2]
ENVS = ROOT / ".cache" / "versions" / "envs"

# Each library: its distribution on PyPI, the prefix of its files inside the wheel (dropped from
# a file's name), the patterns (under that prefix) of its recurrent-layer code, its repository.
LIBRARIES = {
    "keras": {"name": "Keras 3", "distribution": "keras", "prefix": "keras/src/",
              "patterns": ("layers/rnn/*.py", "backend/*/rnn.py"),
              "repo": "keras-team/keras"},
    "tf-keras": {"name": "Keras 2 (tf-keras)", "distribution": "tf-keras",
                 "prefix": "tf_keras/src/", "patterns": ("layers/rnn/*.py",),
                 "repo": "keras-team/tf-keras"},
    "pytorch": {"name": "PyTorch", "distribution": "torch", "prefix": "torch/",
                "patterns": ("nn/modules/rnn.py", "nn/utils/rnn.py"),
                "repo": "pytorch/pytorch"},
    "jax": {"name": "JAX", "distribution": "jax", "prefix": "jax/",
            "patterns": ("experimental/rnn.py",), "repo": "jax-ml/jax"},
}


def selected(library: str, wheel_path: str) -> str | None:
    """The file's name (prefix dropped) when a path of the wheel is recurrent-layer code."""
    spec = LIBRARIES[library]
    if not wheel_path.startswith(spec["prefix"]):
        return None
    name = wheel_path[len(spec["prefix"]):]
    if name.endswith("_test.py"):
        return None
    # fnmatch's * crosses "/": a pattern's folders must match part for part
    parts = name.split("/")
    for pattern in spec["patterns"]:
        pp = pattern.split("/")
        if len(pp) == len(parts) and all(fnmatch(a, b) for a, b in zip(parts, pp)):
            return name
    return None


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def release(version: str) -> str:
    """A release as the data names it: a local build's label dropped (2.13.0+cpu is 2.13.0)."""
    return str(Version(version).base_version) if "+" in version else version


def hash_folder(library: str, site_packages: Path) -> dict[str, str]:
    """{file: hash} of a library's recurrent-layer code installed in `site_packages`."""
    prefix = site_packages / LIBRARIES[library]["prefix"]
    out = {}
    for pattern in LIBRARIES[library]["patterns"]:
        for path in prefix.glob(pattern):
            rel = path.relative_to(site_packages).as_posix()
            name = selected(library, rel)
            if name and path.is_file():
                out[name] = digest(path.read_bytes())
    return dict(sorted(out.items()))


_DIST_INFO = re.compile(r"^(?P<name>[A-Za-z0-9_.]+)-(?P<version>[^-]+)\.dist-info$")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def local_installs(envs: Path = ENVS) -> dict[str, dict[str, Path]]:
    """{library: {release: site-packages}} for every release installed here: the environments
    of the version matrix and the project's own environment."""
    folders = sorted(Path(envs).glob("*/lib/python*/site-packages")) if Path(envs).is_dir() else []
    out: dict[str, dict[str, Path]] = {lib: {} for lib in LIBRARIES}
    wanted = {_canonical(s["distribution"]): lib for lib, s in LIBRARIES.items()}
    for folder in folders:
        for info in folder.glob("*.dist-info"):
            m = _DIST_INFO.match(info.name)
            if m and _canonical(m.group("name")) in wanted:
                try:
                    out[wanted[_canonical(m.group("name"))]].setdefault(
                        release(m.group("version")), folder)
                except InvalidVersion:
                    continue
    for lib, spec in LIBRARIES.items():  # the environment running this
        try:
            dist = importlib.metadata.distribution(spec["distribution"])
        except importlib.metadata.PackageNotFoundError:
            continue
        out[lib].setdefault(release(dist.version), Path(dist.locate_file("")))
    return out
