"""The notebooks' executed pages, per environment, and taken from the committed outputs.

mkdocs-jupyter (0.26.3) caches each executed notebook under `cache_dir`, keyed by the notebook's
bytes and its own options only: a new TensorFlow would show the old run. Its cache is put in a
folder named by the environment (pipeline/running/cache.py, environment_key: Python, the device,
the pinned requirements), so that another environment executes the notebook again.

A fresh clone has no cache: the renders saved under results/outputs/notebooks/<environment>/
(pipeline/records/outputs.py, `make save-outputs`) are copied into it first, each only if its
file is the one saved (renders.json holds their hashes). mkdocs-jupyter then takes a render only
for the notebook's current key, as for any cache file, and executes a notebook that changed.
Paths are relative to the folder the build runs in, as mkdocs-jupyter's own `cache_dir`.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

# MkDocs loads a hook as a lone file: make the `pipeline` package importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from pipeline.running import device  # noqa: E402
from pipeline.running.cache import environment_key, OUTPUTS_DIR  # noqa: E402

COMMITTED = Path("results") / OUTPUTS_DIR / "notebooks"
INDEX = "renders.json"  # {file name: sha256}


def environment() -> str:
    return environment_key(sorted(Path().glob("requirements*.txt")), device.device_kind())


def adopt(committed: Path, cache_dir: Path) -> list[str]:
    """Copy into `cache_dir` the committed renders it lacks whose files are the ones saved."""
    try:
        saved = json.loads((committed / INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    adopted = []
    for name, digest in saved.items() if isinstance(saved, dict) else []:
        source, target = committed / name, cache_dir / name
        if target.exists() or "/" in name or not source.is_file() or \
                hashlib.sha256(source.read_bytes()).hexdigest() != digest:
            continue
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
        os.close(fd)
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
        adopted.append(name)
    return adopted


def on_config(config):
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is None or not jupyter.config["cache"]:
        return config
    env = environment()
    if not getattr(jupyter, "_per_environment", False):  # `mkdocs serve` keeps the plugin
        jupyter.config["cache_dir"] = str(Path(jupyter.config["cache_dir"]) / env)
        jupyter._per_environment = True
    adopt(COMMITTED / env, Path(jupyter.config["cache_dir"]))
    return config
