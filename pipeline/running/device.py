"""Which device the snippets run on: part of every cache key and shown next to every output."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess


@functools.lru_cache(maxsize=1)
def device_kind() -> str:
    """'CPU', or the name of the first NVIDIA GPU (e.g. 'GPU: NVIDIA A100-SXM4-40GB').

    Uses nvidia-smi rather than importing TensorFlow, which would cost seconds on every build.
    SNIPPETS_DEVICE overrides it (tests use it to pretend to be another machine).
    """
    forced = os.environ.get("SNIPPETS_DEVICE")
    if forced:
        return forced
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run(
                [smi, "--query-gpu=name", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=20, check=True,
            ).stdout.strip().splitlines()
        except (subprocess.SubprocessError, OSError):
            out = []
        if out and out[0].strip():
            return f"GPU: {out[0].strip()}"
    return "CPU"


def has_gpu() -> bool:
    return device_kind() != "CPU"
