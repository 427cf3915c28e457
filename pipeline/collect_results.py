"""Copy this machine's benchmark results into a results folder, one file per benchmark:

    python -m pipeline.collect_results results      # then commit results/<benchmark>/<machine>.json

Runs whatever snippet is stale first (so it measures this machine if nothing is cached).
Committed files are drawn next to every later build's own measurements, labelled by machine.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from .runner import Project, RunFailed, failures, run_all


def slug(machine: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", machine).strip("-").lower() or "machine"


def collect(dest: Path, project: Project) -> list[Path]:
    outcomes = run_all(project)
    bad = failures(outcomes)
    if bad:
        raise RunFailed(bad)
    written = []
    for o in outcomes:
        if not o.data_dir:
            continue
        for src in sorted(Path(o.data_dir).glob("*.json")):
            data = json.loads(src.read_text(encoding="utf-8"))
            if "benchmark" not in data or "machine" not in data.get("provenance", {}):
                continue  # not a benchmark result
            target = dest / data["benchmark"] / f"{slug(data['provenance']['machine'])}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
            os.replace(tmp, target)
            written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: python -m pipeline.collect_results DEST_FOLDER", file=sys.stderr)
        return 2
    try:
        written = collect(Path(args[0]), Project(Path(".")))
    except RunFailed as e:
        print(e, file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    if not written:
        print("no benchmark results were produced", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
