"""Records: what a run on another machine (a GPU run) leaves under results/ to commit, and what
every later build shows, labelled with that machine.

    results/<machine>/machine.json                      provenance of the machine, its last run
    results/<machine>/snippets/<snippet>/result.json    one record per snippet
    results/<machine>/snippets/<snippet>/data/          the files it wrote (benchmark JSON)

A record is the run cache's result.json (snippet, status, stdout, stderr, returncode, seconds,
finished_at, device, data_files, and for a Python snippet the program it ran as) plus `source_hash` (the snippet and the local helpers it
imports, nothing else: a record stays valid across machines and library versions, and goes
stale when the code it ran changes) and `provenance` (the machine: GPU, driver, CUDA, cuDNN,
frameworks, Python, date). Records are written atomically, one snippet at a time, so an
interrupted run keeps the ones it finished. A damaged record is an error, never skipped.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pipeline.running.cache import OUTPUTS_DIR
from pipeline.running.files import write_atomic
from pipeline.running.snippets import discover, Snippet, SnippetError

MACHINE_FILE = "machine.json"
SNIPPETS_DIR = "snippets"
RESULT_FILE = "result.json"  # the same names as the cache's entries
DATA_DIR = "data"
FIELDS = {"snippet": str, "status": str, "stdout": str, "stderr": str, "returncode": int,
          "seconds": (int, float), "finished_at": str, "device": str, "data_files": dict,
          "source_hash": str, "provenance": dict}
# Kept when the run has them: the name and hash of the program a Python snippet ran as (the one
# its pages' copy button copies, pipeline/running/program.py); records made before had none.
OPTIONAL = {"program": str, "program_sha256": str, "key": str}  # key: the run cache's
MATRIX_DIR = "versions"  # results/versions/: the version matrix's cells (pipeline/records/versions.py)
RECORDED_STATUS = "ok"  # only what succeeded is recorded; skips and failures go in machine.json
# results/outputs/ (OUTPUTS_DIR): the committed outputs of this project's CPU runs, "needs a
# GPU" included (pipeline/records/outputs.py), in the same format; not a machine's records
BROWSER_DIR = "browser"  # results/browser/: the browser tests' committed runs (tests/site/committed.py)


class RecordError(ValueError):
    """A record or machine file under results/ is damaged: the message names it and says why."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def source_hash(snippet: Snippet, snippets_root: Path) -> str:
    """Hash of the snippet's file and the local helpers it uses (as pipeline/running/snippets.py finds
    them), named relative to snippets/ so that the hash is the same in every clone."""
    h = hashlib.sha256()
    root = Path(snippets_root).resolve()
    for label, path in [("snippet:" + snippet.rel, snippet.path)] + [
            ("helper:" + (p.relative_to(root).as_posix() if p.is_relative_to(root) else p.name), p)
            for p in snippet.helpers]:
        data = path.read_bytes()
        h.update(label.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()


def machine_slug(label: str) -> str:
    """Folder name for a machine: 'GPU: NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    label = re.sub(r"^(GPU|CPU):\s*", "", label.strip())
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")[:80].strip("-")
    if not slug:
        raise RecordError(f"machine name {label!r} has no letters or digits")
    return slug


def record_dir(results: Path, slug: str, rel: str) -> Path:
    return Path(results) / slug / SNIPPETS_DIR / rel


# --- writing -------------------------------------------------------------------------------------

def write(results: Path, slug: str, cache_entry: Path, source: str, provenance: dict,
          statuses: tuple[str, ...] = (RECORDED_STATUS,)) -> Path:
    """Turn one cache entry (result.json + data/) into this machine's record of that snippet,
    replacing an older record of it. Built in a hidden folder beside, then renamed into place:
    a reader (or a crash) sees the old record or the new one, never a part of one."""
    result = json.loads((Path(cache_entry) / RESULT_FILE).read_text(encoding="utf-8"))
    if result.get("status") not in statuses:
        raise RecordError(f"{result.get('snippet')}: only a successful run is recorded, "
                          f"not status {result.get('status')!r}")
    record = {k: result[k] for k in (*FIELDS, *OPTIONAL) if k in result}
    record.update(source_hash=source, provenance=provenance)
    final = record_dir(results, slug, record["snippet"])
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    try:
        shutil.copytree(Path(cache_entry) / DATA_DIR, tmp / DATA_DIR)
        (tmp / RESULT_FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        _check(record, tmp, record["snippet"], tmp / RESULT_FILE, statuses)
        old = None
        if final.exists():
            old = final.with_name(f".{final.name}.old-{os.getpid()}")
            os.rename(final, old)
        os.rename(tmp, final)
        if old:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def already(results: Path, slug: str, rel: str, finished_at: str, source: str) -> bool:
    """True when this machine's record of `rel` is this very run (a result reused from the
    cache): then it stays as it is, with the provenance of the run that made it."""
    try:
        old = json.loads((record_dir(results, slug, rel) / RESULT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return old.get("finished_at") == finished_at and old.get("source_hash") == source


def write_machine(results: Path, slug: str, machine: dict) -> Path:
    """results/<machine>/machine.json, atomically."""
    path = Path(results) / slug / MACHINE_FILE
    write_atomic(path, json.dumps(machine, indent=1) + "\n")
    return path


# --- reading -------------------------------------------------------------------------------------

@dataclass
class Record:
    slug: str  # the machine's folder under results/
    path: Path  # the record's folder
    data: dict  # result.json
    stale: bool  # the snippet changed since the record was made (or no longer exists)

    @property
    def snippet(self) -> str:
        return self.data["snippet"]

    @property
    def machine(self) -> str:
        return self.data["provenance"]["machine"]

    @property
    def on_gpu(self) -> bool:
        return self.data["device"] != "CPU"

    @property
    def date(self) -> str:
        return self.data["finished_at"][:10]

    @property
    def data_dir(self) -> Path:
        return self.path / DATA_DIR

    def where(self, root: Path) -> str:
        return self.path.relative_to(root).as_posix() if self.path.is_relative_to(root) \
            else str(self.path)


@dataclass
class Machine:
    slug: str
    data: dict  # machine.json
    records: list[Record]


def _check(record: dict, folder: Path, rel: str, where: Path,
           statuses: tuple[str, ...] = (RECORDED_STATUS,)) -> None:
    bad = [k for k, kind in FIELDS.items() if not isinstance(record.get(k), kind)
           or (kind is int and isinstance(record.get(k), bool))]
    bad += [k for k, kind in OPTIONAL.items() if k in record and not isinstance(record[k], kind)]
    if bad:
        raise RecordError(f"{where}: missing or mistyped {', '.join(bad)}")
    if record["snippet"] != rel:
        raise RecordError(f"{where}: records {record['snippet']!r} but sits in the folder of {rel!r}")
    if record["status"] not in statuses:
        raise RecordError(f"{where}: status {record['status']!r}; only "
                          f"{' or '.join(map(repr, statuses))} is recorded")
    if not re.fullmatch(r"[0-9a-f]{64}", record["source_hash"]):
        raise RecordError(f"{where}: source_hash is not a SHA-256")
    for key in ("machine", "date"):
        if not record["provenance"].get(key):
            raise RecordError(f"{where}: provenance does not say the {key}")
    data = folder / DATA_DIR
    found = {p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file()} \
        if data.is_dir() else set()
    listed = set(record["data_files"])
    if found != listed:
        odd = sorted(found ^ listed)
        raise RecordError(f"{where}: data files differ from data_files ({', '.join(odd)})")
    for name, digest in record["data_files"].items():
        if _sha256((data / name).read_bytes()) != digest:
            raise RecordError(f"{where}: data/{name} does not match its hash")


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RecordError(f"{path}: not readable JSON ({e})") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path}: not a JSON object")
    return data


def current_hashes(snippets_root: Path) -> dict[str, str]:
    """{snippet rel: source hash} for every snippet there is now."""
    root = Path(snippets_root)
    return {s.rel: source_hash(s, root) for s in discover(root)} if root.is_dir() else {}


def load_all(results: Path, snippets_root: Path) -> list[Machine]:
    """Every machine under results/ with its records, checked; stale ones marked. Hidden
    folders (a record being written) are ignored, and so are results/versions/, whose cells are
    read by loading that folder itself, results/outputs/ (this project's own CPU runs, which
    the runner takes as its cache's) and results/browser/ (the browser tests'). Raises
    RecordError on anything damaged."""
    results = Path(results)
    if not results.is_dir():
        return []
    try:
        hashes = current_hashes(snippets_root)
    except SnippetError:
        hashes = {}  # the runner reports a bad header; records then all read as stale
    machines = []
    for folder in sorted(p for p in results.iterdir() if p.is_dir() and not p.name.startswith(".")
                         and p.name not in (MATRIX_DIR, OUTPUTS_DIR, BROWSER_DIR)):
        machine_file = folder / MACHINE_FILE
        if not machine_file.is_file():
            raise RecordError(f"{folder}: no {MACHINE_FILE} (every machine folder says what "
                              "machine it is)")
        info = _read_json(machine_file)
        if not isinstance(info.get("provenance"), dict) or not info["provenance"].get("machine"):
            raise RecordError(f"{machine_file}: provenance does not name the machine")
        records = []
        base = folder / SNIPPETS_DIR
        for result in sorted(base.rglob(RESULT_FILE)) if base.is_dir() else []:
            rel_path = result.parent.relative_to(base)
            if any(part.startswith(".") for part in rel_path.parts):
                continue
            data = _read_json(result)
            _check(data, result.parent, rel_path.as_posix(), result)
            stale = hashes.get(data["snippet"]) != data["source_hash"]
            records.append(Record(folder.name, result.parent, data, stale))
        machines.append(Machine(folder.name, info, records))
    return machines


def for_snippet(machines: list[Machine], rel: str, gpu_only: bool = True) -> list[Record]:
    """Every machine's record of one snippet (made on a GPU, unless `gpu_only` is False):
    current ones first, then by machine."""
    found = [r for m in machines for r in m.records
             if r.snippet == rel and (r.on_gpu or not gpu_only)]
    return sorted(found, key=lambda r: (r.stale, r.machine, r.slug))


def data_files(machines: list[Machine], name: str) -> list[tuple[Path, str]]:
    """(path, where) of every recorded data file called `name` (a benchmark's JSON): the
    machine's folder, the date, and whether the snippet has changed since. A chart labels the
    series with the machine its data names, followed by this."""
    found = []
    for m in machines:
        for r in m.records:
            path = r.data_dir / name
            if path.is_file():
                where = f"results/{m.slug}, {r.date}"
                found.append((path, where + (", older version of the snippet" if r.stale else "")))
    return found
