"""Helpers shared by the benchmark programs: timing and provenance, and writing results.

A benchmark copied from its page holds this file's code already; in the repository it sits
beside the benchmarks, which import it.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path


def scale() -> int:
    """BENCH_SCALE=4 makes the benchmarks 4x larger (for a GPU); 1 fits a 2-core CPU build."""
    value = os.environ.get("BENCH_SCALE", "1")
    if not value.isdigit() or int(value) < 1:
        raise SystemExit(f"BENCH_SCALE must be a positive whole number, got {value!r}")
    return int(value)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def provenance() -> dict:
    """Where and with what a measurement was taken: CPU, versions, date, and the GPU if the
    framework this benchmark imported (TensorFlow, PyTorch or JAX) uses one. Imports nothing
    new: a benchmark on a machine without TensorFlow still says which GPU it ran on."""
    info = {
        "cpu_model": cpu_model(),
        "cpu_cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    for key, dist in (("tensorflow", "tensorflow"), ("keras", "keras"), ("tf_keras", "tf-keras"),
                      ("torch", "torch"), ("jax", "jax")):
        if _version(dist):
            info[key] = _version(dist)
    gpu_name = None
    if "tensorflow" in sys.modules:
        tf = sys.modules["tensorflow"]
        build = tf.sysconfig.get_build_info()
        # What TensorFlow was compiled against; only meaningful when a GPU is used.
        info.update(tf_built_with_cuda=build.get("cuda_version"),
                    tf_built_with_cudnn=build.get("cudnn_version"))
        gpus = tf.config.list_physical_devices("GPU")
        if gpus:
            gpu_name = tf.config.experimental.get_device_details(gpus[0]).get("device_name", "GPU")
    if "torch" in sys.modules and not gpu_name:
        torch = sys.modules["torch"]
        if torch.cuda.is_available():
            gpu_name = torch.cuda.get_device_name(0)
            info.update(torch_cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version())
    if "jax" in sys.modules and not gpu_name:
        jax = sys.modules["jax"]
        if jax.default_backend() == "gpu":
            gpu_name = jax.devices()[0].device_kind
    info["device"] = "GPU" if gpu_name else "CPU"
    info["device_name"] = gpu_name or info["cpu_model"]
    # The label every chart and table shows: never a CPU figure without "CPU" in front.
    info["machine"] = (f"GPU: {gpu_name}" if gpu_name
                       else f"CPU: {info['cpu_model']} ({info['cpu_cores']} cores)")
    return info


def quick() -> bool:
    """BENCH_QUICK=1: 1 warm-up and 3 repetitions, for tests. Such results are marked "quick"."""
    return os.environ.get("BENCH_QUICK") == "1"


def measure(fn, *, warmup: int = 2, repeats: int = 7, sync=None) -> dict:
    """Time fn() after warm-up; median and spread in milliseconds. `sync` waits for the device."""
    if quick():
        warmup, repeats = min(warmup, 1), min(repeats, 3)
    for _ in range(warmup):
        fn()
    if sync:
        sync()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        if sync:
            sync()
        samples.append((time.perf_counter() - start) * 1000)
    return spread(samples)


def spread(samples: list[float]) -> dict:
    """Median, quartiles and extremes of repeated measurements (times, bytes, ...)."""
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive") if len(samples) > 1 \
        else (samples[0],) * 3
    return {"median": statistics.median(samples), "q1": q1, "q3": q3,
            "min": min(samples), "max": max(samples), "samples": list(samples)}


def per_second(timing: dict, items: int) -> dict:
    """Turn a timing in ms per call into items per second (a slower call is a lower rate)."""
    rate = lambda ms: items * 1000.0 / ms
    return {"median": rate(timing["median"]), "q1": rate(timing["q3"]), "q3": rate(timing["q1"]),
            "min": rate(timing["max"]), "max": rate(timing["min"]),
            "samples": [rate(ms) for ms in timing["samples"]], "ms_median": timing["median"]}


def relative(timing: dict, base: dict, **extra) -> dict:
    """A timing divided by a baseline's median: 2.0 means twice as slow as the baseline."""
    ratio = lambda ms: ms / base["median"]
    return {**extra, **{k: ratio(timing[k]) for k in ("median", "q1", "q3", "min", "max")},
            "samples": [ratio(ms) for ms in timing["samples"]]}


def write_result(benchmark: str, title: str, metric: str, results: list[dict], **extra) -> Path:
    """Write BENCHMARK.json into $SNIPPET_DATA_DIR (or the current folder), atomically."""
    out_dir = Path(os.environ.get("SNIPPET_DATA_DIR", "."))
    out_dir.mkdir(parents=True, exist_ok=True)
    data = {"benchmark": benchmark, "title": title, "metric": metric,
            "provenance": provenance(), "results": results, "bench_scale": scale(), **extra}
    if quick():
        data["quick"] = True  # too few repetitions to publish
    return write_json(out_dir / f"{benchmark}.json", data)


def write_json(path: Path, data: dict) -> Path:
    """Write JSON so that a reader never sees a half-written file (temp file, then rename)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)
    return path
