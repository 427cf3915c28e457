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
# results/outputs/: the committed outputs a fresh clone takes its runs from (Cache.committed,
# written by pipeline/records/outputs.py)
OUTPUTS_DIR = "outputs"
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


def environment_key(requirements: list[Path], device: str) -> str:
    """What a run depends on besides its own files: Python, the device and the pinned
    requirements (key_for's other parts). Names the notebooks' execution cache
    (pipeline/pages/hooks/notebook_outputs.py), whose own key is the notebook alone."""
    h = hashlib.sha256()
    for label, data in [("format", CACHE_FORMAT.encode()), ("python", sys.version.split()[0].encode()),
                        ("device", device.encode())] + [
            ("requirements:" + r.name, r.read_bytes() if r.is_file() else b"") for r in requirements]:
        h.update(label.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()[:16]


def _intact(folder: Path, key: str, exact: bool = False) -> dict | None:
    """The result.json of a run's folder when it was made from `key` and the data files it lists
    are unchanged (`exact`: and there are no others); else None."""
    try:
        result = json.loads((folder / RESULT_FILE).read_text(encoding="utf-8"))
        data = folder / DATA_DIR
        listed = result.get("data_files", {})
        found = {p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file()} \
            if exact and data.is_dir() else set(listed) if not exact else set()
        intact = result.get("key") == key and found == set(listed) and all(
            _sha256((data / name).read_bytes()) == digest for name, digest in listed.items())
    except (OSError, ValueError, AttributeError, TypeError):
        return None
    return result if intact else None


class Cache:
    """`committed`: a folder of committed outputs (results/outputs/snippets/, written by
    pipeline/records/outputs.py), one per snippet: a run missing here is taken from there when
    it was made from exactly the same key, so that a fresh clone does not run again what has not
    changed since it was committed."""

    def __init__(self, root: Path, committed: Path | None = None):
        self.root = root
        self.runs = root / "runs"
        self.committed = committed

    def entry(self, key: str) -> Path:
        return self.runs / key

    def load(self, key: str, rel: str | None = None) -> dict | None:
        """The stored result, or None when absent or not intact (a damaged entry is removed).
        With `rel` (the snippet), a result missing here is adopted from the committed outputs
        when theirs was made from `key`; it then says `"committed": True`."""
        folder = self.entry(key)
        if not folder.is_dir():
            return self._adopt(key, rel) if rel and self.committed else None
        result = _intact(folder, key)
        if result is None:
            shutil.rmtree(folder, ignore_errors=True)
            return None
        result["data_dir"] = str(folder / DATA_DIR)
        return result

    def _adopt(self, key: str, rel: str) -> dict | None:
        """Copy the committed output of `rel` into the cache when it was made from `key` and is
        intact (a damaged one is never used: the snippet runs, and tests/records/test_outputs.py
        names it). Built in a private folder, then renamed into place, as a run is."""
        source = self.committed / rel
        if _intact(source, key, exact=True) is None:
            return None
        work = Path(tempfile.mkdtemp(prefix="adopt-", dir=self._tmp()))
        shutil.copytree(source / DATA_DIR, work / DATA_DIR) if (source / DATA_DIR).is_dir() \
            else (work / DATA_DIR).mkdir()
        shutil.copyfile(source / RESULT_FILE, work / RESULT_FILE)
        self.runs.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(work, self.entry(key))
        except OSError:  # another build adopted it first: the same files
            shutil.rmtree(work, ignore_errors=True)
        result = self.load(key)
        if result is not None:
            result["committed"] = True
        return result

    def _tmp(self) -> Path:
        tmp = self.root / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        return tmp

    def new_workdir(self) -> Path:
        """A private folder for one run; becomes the cache entry if the run succeeds."""
        work = Path(tempfile.mkdtemp(prefix="run-", dir=self._tmp()))
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
