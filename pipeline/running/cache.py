"""The run cache: one folder per successful run, named by a hash of everything that decides
the result. Written atomically (built in a temporary folder, then renamed), checked on read."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from pipeline.running import program, sandbox
from pipeline.running.snippets import Snippet

# Bump when the way results are produced changes, so old entries stop matching.
CACHE_FORMAT = "1"
RESULT_FILE = "result.json"
DATA_DIR = "data"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def key_for(snippet: Snippet, requirements: list[Path], device: str) -> str:
    """Hash of the snippet, the local helpers it uses, the program a Python snippet runs as
    (pipeline/running/program.py), the pinned requirements, the device, the
    BENCH_* variables that size the benchmarks (BENCH_SCALE=4 must not reuse a scale-1 run), and
    the sandbox every snippet runs in (a change to what it allows must run everything again)."""
    h = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        h.update(label.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)

    add("format", CACHE_FORMAT.encode())
    add("python", sys.version.split()[0].encode())
    add("device", device.encode())
    for name in sorted(k for k in os.environ if k.startswith("BENCH_")):
        add("env:" + name, os.environ[name].encode())
    add("snippet", snippet.rel.encode())
    add("source", snippet.path.read_bytes())
    for helper in snippet.helpers:
        add("helper:" + helper.name, helper.read_bytes())
    if snippet.kind == "py":
        add("program", program.for_snippet(snippet).text.encode())
    for req in requirements:
        add("requirements:" + req.name, req.read_bytes() if req.is_file() else b"")
    for part in sandbox.files():
        add("sandbox:" + part.name, part.read_bytes())
    return h.hexdigest()


class Cache:
    def __init__(self, root: Path):
        self.root = root
        self.runs = root / "runs"

    def entry(self, key: str) -> Path:
        return self.runs / key

    def load(self, key: str) -> dict | None:
        """The stored result, or None when absent or not intact (a damaged entry is removed)."""
        folder = self.entry(key)
        if not folder.is_dir():
            return None
        try:
            result = json.loads((folder / RESULT_FILE).read_text(encoding="utf-8"))
            intact = result.get("key") == key and all(
                _sha256((folder / DATA_DIR / name).read_bytes()) == digest
                for name, digest in result.get("data_files", {}).items()
            )
        except (OSError, ValueError, AttributeError):
            intact = False
        if not intact:
            shutil.rmtree(folder, ignore_errors=True)
            return None
        result["data_dir"] = str(folder / DATA_DIR)
        return result

    def new_workdir(self) -> Path:
        """A private folder for one run; becomes the cache entry if the run succeeds."""
        tmp = self.root / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="run-", dir=tmp))
        (work / DATA_DIR).mkdir()
        return work

    def store(self, key: str, work: Path, result: dict) -> Path:
        """Seal a run's folder and rename it into place. If another build stored the same key
        first, keep theirs: both came from the same inputs."""
        data = work / DATA_DIR
        result = dict(result, key=key, data_files={
            p.relative_to(data).as_posix(): _sha256(p.read_bytes())
            for p in sorted(data.rglob("*")) if p.is_file()
        })
        (work / RESULT_FILE).write_text(json.dumps(result, indent=1), encoding="utf-8")
        self.runs.mkdir(parents=True, exist_ok=True)
        final = self.entry(key)
        try:
            os.rename(work, final)
        except OSError:
            shutil.rmtree(work, ignore_errors=True)
        return final

    def discard(self, work: Path) -> None:
        shutil.rmtree(work, ignore_errors=True)
