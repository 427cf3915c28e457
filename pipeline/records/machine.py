"""What machine a run happens on: the provenance every record carries (GPU, driver, CUDA, cuDNN,
frameworks, Python, date). Read from nvidia-smi, nvcc, cuDNN's header, the installed packages'
metadata, and the frameworks themselves, in a child process (importing PyTorch here would cost
seconds and GPU memory): PyTorch, and TensorFlow's record of its build. Anything absent is left
out, never guessed.
"""
from __future__ import annotations

import importlib.metadata as md
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from pipeline.running import device

# Distributions whose versions say what ran: frameworks, JAX's CUDA plugins, NVIDIA's wheels.
DISTRIBUTIONS = ("tensorflow", "tf-keras", "keras", "torch", "jax", "jaxlib",
                 "jax-cuda12-plugin", "jax-cuda12-pjrt", "jax-cuda13-plugin", "jax-cuda13-pjrt",
                 "numpy", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "nvidia-cudnn-frontend",
                 "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime", "nvidia-cuda-nvcc-cu12",
                 "nvidia-cuda-nvcc")
# Where cuDNN's header is on a system install (NVIDIA's Debian/Ubuntu packages, the tarball in
# the toolkit's folder).
HEADER_DIRS = ("include", "/usr/include", "/usr/include/x86_64-linux-gnu",
               "/usr/include/aarch64-linux-gnu", "/usr/local/cuda/include")

# Run in a child process with the same Python: what each framework was built with and sees.
_PROBE = r"""
import json, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
out = {}
try:
    import torch
    out["torch_cuda"] = torch.version.cuda
    out["torch_cudnn"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
except ImportError:
    pass
# TensorFlow's tf.sysconfig.get_build_info() returns the dict of its generated module
# tensorflow/python/platform/build_info.py, fixed when the package was built: read from that module
# alone, without the seconds of importing TensorFlow (tests/records/test_gpu_run.py compares the two).
import importlib.util, pathlib
spec = importlib.util.find_spec("tensorflow")
if spec and spec.submodule_search_locations:
    for folder in spec.submodule_search_locations:
        path = pathlib.Path(folder, "python", "platform", "build_info.py")
        if path.is_file():
            found = importlib.util.spec_from_file_location("tf_build_info", path)
            module = importlib.util.module_from_spec(found)
            found.loader.exec_module(module)
            b = module.build_info
            out["tensorflow_built_with_cuda"] = b.get("cuda_version")
            out["tensorflow_built_with_cudnn"] = b.get("cudnn_version")
            break
print(json.dumps({k: v for k, v in out.items() if v is not None}))
"""


def _run(cmd: list[str], timeout: float = 60) -> str | None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def gpu_info() -> dict:
    """GPU name, count, memory, compute capability, driver and the newest CUDA the driver
    supports, from nvidia-smi. Empty without one."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return {}
    info: dict = {}
    query = _run([smi, "--query-gpu=name,driver_version,memory.total,compute_cap",
                  "--format=csv,noheader"])
    if query is None:  # drivers before 510 do not know compute_cap
        query = _run([smi, "--query-gpu=name,driver_version,memory.total",
                      "--format=csv,noheader"])
    rows = [[c.strip() for c in line.split(",")] for line in (query or "").splitlines()
            if line.strip()]
    if rows:
        keys = ("gpu_name", "driver", "gpu_memory", "gpu_compute_capability")
        info.update({k: v for k, v in zip(keys, rows[0]) if v})
        info["gpu_count"] = len(rows)
    header = _run([smi]) or ""
    m = re.search(r"CUDA Version:\s*([\d.]+)", header)
    if m:
        info["cuda_driver_supports"] = m.group(1)
    return info


def cuda_home() -> Path | None:
    for candidate in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def cuda_toolkit() -> str | None:
    """The CUDA toolkit's nvcc release, e.g. '12.4 (/usr/local/cuda/bin/nvcc)'."""
    home = cuda_home()
    for nvcc in ([str(home / "bin" / "nvcc")] if home else []) + [shutil.which("nvcc") or ""]:
        if nvcc and Path(nvcc).is_file():
            out = _run([nvcc, "--version"]) or ""
            m = re.search(r"release ([\d.]+)", out)
            if m:
                return f"{m.group(1)} ({nvcc})"
    return None


def cudnn_header_version(dirs: list[Path] | None = None) -> str | None:
    """cuDNN's version from a system cudnn_version.h, e.g. '9.1.0 (/usr/include)'."""
    home = cuda_home()
    dirs = dirs if dirs is not None else (
        ([home / "include"] if home else []) + [Path(d) for d in HEADER_DIRS if d != "include"])
    for folder in dirs:
        header = Path(folder) / "cudnn_version.h"
        if header.is_file():
            text = header.read_text(errors="replace")
            parts = [re.search(rf"#define\s+CUDNN_{k}\s+(\d+)", text)
                     for k in ("MAJOR", "MINOR", "PATCHLEVEL")]
            if all(parts):
                return f"{'.'.join(p.group(1) for p in parts)} ({folder})"
    return None


def distributions() -> dict[str, str]:
    found = {}
    for name in DISTRIBUTIONS:
        try:
            found[name] = md.version(name)
        except md.PackageNotFoundError:
            pass
    return found


def framework_probe(python: str = sys.executable) -> dict:
    out = _run([python, "-c", _PROBE], timeout=300)
    try:
        return json.loads(out.strip().splitlines()[-1]) if out else {}
    except (ValueError, IndexError):
        return {}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def provenance() -> dict:
    """Everything a record says about the machine that made it."""
    kind = device.device_kind()
    # The label every record and chart shows: a CPU is named by its model, never just "CPU".
    info: dict = {"machine": kind if kind != "CPU" else f"CPU: {cpu_model()} ({os.cpu_count()} cores)"}
    info.update(gpu_info())
    toolkit = cuda_toolkit()
    if toolkit:
        info["cuda_toolkit"] = toolkit
    header = cudnn_header_version()
    if header:
        info["cudnn_system"] = header
    info.update(framework_probe())
    info["packages"] = distributions()
    info.update(python=platform.python_version(), platform=platform.platform(),
                cpu_model=cpu_model(), cpu_cores=os.cpu_count(),
                date=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    return info
