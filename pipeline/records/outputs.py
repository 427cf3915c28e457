"""The committed outputs: what each snippet printed on a CPU the last time it ran here, with the
files it wrote, committed under results/outputs/ so that a fresh clone (CI, a writer's first
`make serve`) runs only the snippets that changed since and takes the others' runs from here.

    results/outputs/machine.json                     the machine of the last save
    results/outputs/snippets/<snippet>/result.json   the run cache's result.json, its `key` included,
                                                     with source_hash and provenance (a record)
    results/outputs/snippets/<snippet>/data/         the files it wrote
    results/outputs/notebooks/<environment>/         the notebooks' executed pages, as
                                                     mkdocs-jupyter caches them, and renders.json
                                                     (pipeline/pages/hooks/notebook_outputs.py)

A run is taken from here only for the very key it was made from (pipeline/running/cache.py,
key_for: the snippet, its helpers, the program it runs as, the pinned requirements, Python, the
device, the BENCH_* variables and the sandbox): with anything else, the snippet runs. Only CPU
runs that succeeded or said "needs a GPU" are saved; a GPU's runs are records
(pipeline/records/store.py, `make add-records`).

    python -m pipeline.records.outputs    # save the cache's current runs (`make save-outputs`
                                          # runs the stale snippets first)
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from pipeline.records import machine, store
from pipeline.running import device as device_mod
from pipeline.running.cache import Cache, environment_key, key_for, OUTPUTS_DIR
from pipeline.running.files import write_atomic
from pipeline.running.runner import NEEDS_GPU, OK, Project
from pipeline.running.snippets import discover, SnippetError

SAVED = (OK, NEEDS_GPU)


def _recorded_key(folder: Path) -> tuple[str | None, str | None]:
    """(key, finished_at) of the committed output in `folder`; (None, None) when there is none."""
    try:
        data = json.loads((folder / store.RESULT_FILE).read_text(encoding="utf-8"))
        return data.get("key"), data.get("finished_at")
    except (OSError, ValueError, AttributeError):
        return None, None


def _remove(folder: Path, top: Path) -> None:
    """Remove one committed output, and the folders it leaves empty up to `top`."""
    hidden = folder.with_name(f".{folder.name}.old-{os.getpid()}")
    os.rename(folder, hidden)  # gone at once for a reader; deleted after
    shutil.rmtree(hidden, ignore_errors=True)
    parent = folder.parent
    while parent != top and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent


def save(project: Project, say=print) -> list[str]:
    """Write the cache's current run of every snippet (the build's, not the version matrix's)
    to results/outputs/, and remove what no longer matches a snippet's current inputs. Returns
    the snippets with no current run to save (not run yet, or failed)."""
    kind = device_mod.device_kind()
    if kind != "CPU":
        raise SystemExit(f"error: this machine runs snippets on a GPU ({kind}); its runs are "
                         "records: make gpu-run, then make add-records")
    results = project.root / "results"
    top = results / OUTPUTS_DIR / store.SNIPPETS_DIR
    cache = Cache(project.cache)
    snippets = [s for s in discover(project.snippets) if not s.matrix]
    provenance = None
    written, unchanged, removed, missing = 0, 0, 0, []
    for s in snippets:
        key = key_for(s, project.requirements, kind)
        folder = store.record_dir(results, OUTPUTS_DIR, s.rel)
        old_key, old_finished = _recorded_key(folder)
        result = cache.load(key)
        if result is None or result["status"] not in SAVED:
            missing.append(s.rel)
            if folder.exists() and old_key != key:  # made from other inputs: never used again
                _remove(folder, top)
                removed += 1
            continue
        if old_key == key and old_finished == result["finished_at"]:
            unchanged += 1
            continue
        if provenance is None:
            provenance = machine.provenance()
        store.write(results, OUTPUTS_DIR, cache.entry(key),
                    store.source_hash(s, project.snippets), provenance, statuses=SAVED)
        written += 1
    known = {s.rel for s in snippets}
    for result_file in sorted(top.rglob(store.RESULT_FILE)) if top.is_dir() else []:
        rel = result_file.parent.relative_to(top).as_posix()
        if rel not in known and not any(p.startswith(".") for p in rel.split("/")):
            _remove(result_file.parent, top)  # its snippet is gone
            removed += 1
    if provenance is not None:
        store.write_machine(results, OUTPUTS_DIR, {"provenance": provenance})
    say(f"results/{OUTPUTS_DIR}/: {written} saved, {unchanged} unchanged, {removed} removed")
    if missing:
        say(f"{len(missing)} snippet(s) have no successful run with their current inputs, so "
            "none is saved (CI runs them): " + ", ".join(missing))
    return missing


def save_notebooks(project: Project, say=print) -> bool:
    """Save the notebooks' executed pages that mkdocs-jupyter holds for this environment (after a
    build it holds the current ones only: it removes the others) as
    results/outputs/notebooks/<environment>/, replacing every older environment's. False when
    it holds none (no build since the cache was emptied)."""
    env = environment_key(project.requirements, device_mod.device_kind())
    renders = sorted((project.cache / "mkdocs-jupyter" / env).glob("*.json"))
    top = project.root / "results" / OUTPUTS_DIR / "notebooks"
    if not renders:
        say("notebooks: no executed page for this environment in the cache (build the site "
            f"first); results/{OUTPUTS_DIR}/notebooks/ left as it is")
        return False
    top.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{env}.", dir=top))
    try:
        for path in renders:
            shutil.copyfile(path, tmp / path.name)
        write_atomic(tmp / "renders.json", json.dumps(
            {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in renders}, indent=1) + "\n")
        for old in [p for p in top.iterdir() if not p.name.startswith(".")]:
            _remove(old, top)  # this environment's older renders, and other environments'
        os.rename(tmp, top / env)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    say(f"results/{OUTPUTS_DIR}/notebooks/{env}/: {len(renders)} executed notebook page(s)")
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=".", help="the project folder")
    args = ap.parse_args(argv)
    try:
        project = Project(Path(args.root))
        missing = save(project)
        notebooks = save_notebooks(project)
    except (SnippetError, store.RecordError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 1 if missing or not notebooks else 0


if __name__ == "__main__":
    sys.exit(main())
