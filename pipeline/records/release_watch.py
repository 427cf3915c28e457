"""The release watch: what the package registry holds that is newer than the version matrix's
records (results/versions/), for each library the site states rules of.

    python -m pipeline.release_watch                 # every watched library, asked of the registry
    python -m pipeline.release_watch --only torch keras-nightly

The newest release on record is read from the records' provenance (the packages each cell had
installed) with the date its record was made; the registry is asked with pip's own client (`pip
index versions`, with the pip configuration of the machine, pre-releases for the libraries whose
next release readers try early). A library newer on the registry is a cell to add to
pipeline/records/versions.py. A registry that cannot be reached, or a bad argument: one line,
exit 2.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from pipeline.records.gpu_run import Parser  # one clear line and exit 2 on a bad argument

RESULTS = Path("results") / "versions"


@dataclass(frozen=True)
class Watched:
    label: str  # as a page names it
    registry: str  # the distribution on the registry
    recorded_as: tuple[str, ...]  # its names in a record's provenance packages
    pre: bool = False  # list pre-releases (rc, dev): readers of these try them early


WATCHED = (
    Watched("Keras", "keras", ("keras",)),
    Watched("Keras nightly", "keras-nightly", ("keras-nightly",), pre=True),
    Watched("tf-keras", "tf-keras", ("tf-keras", "tf_keras")),
    Watched("TensorFlow", "tensorflow", ("tensorflow",), pre=True),
    Watched("PyTorch", "torch", ("torch",)),
    Watched("JAX", "jax", ("jax",)),
    Watched("cuDNN, CUDA 12 wheel", "nvidia-cudnn-cu12", ("nvidia-cudnn-cu12",)),
    Watched("cuDNN, CUDA 13 wheel", "nvidia-cudnn-cu13", ("nvidia-cudnn-cu13",)),
)


class WatchError(Exception):
    """What went wrong, in one line."""


def _version(text: str) -> Version | None:
    try:
        return Version(text.split("+")[0])
    except InvalidVersion:
        return None


def on_record(results: Path = RESULTS) -> dict[str, tuple[str, str]]:
    """{registry name: (the newest release any record had installed, the date of the newest
    record that had it)}, from results/versions/*/snippets/**/result.json."""
    found: dict[str, tuple[Version, str, str]] = {}
    for result in sorted(Path(results).glob("*/snippets/**/result.json")):
        try:
            record = json.loads(result.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise WatchError(f"{result}: not a record (JSON)") from None
        packages = (record.get("provenance") or {}).get("packages") or {}
        date = str(record.get("finished_at", ""))[:10]
        for w in WATCHED:
            for name in w.recorded_as:
                v = _version(str(packages.get(name, "")))
                if v is None:
                    continue
                best = found.get(w.registry)
                if best is None or v > best[0] or (v == best[0] and date > best[2]):
                    found[w.registry] = (v, packages[name].split("+")[0], date)
    return {name: (text, date) for name, (_, text, date) in found.items()}


AVAILABLE = re.compile(r"^Available versions:\s*(.+)$", re.M)


def on_registry(w: Watched, index_url: str | None = None) -> list[str]:
    """The releases the registry holds of `w`, newest first, as pip lists them."""
    cmd = [sys.executable, "-m", "pip", "index", "versions", w.registry,
           "--disable-pip-version-check", *(["--pre"] if w.pre else []),
           *(["--index-url", index_url] if index_url else [])]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    found = AVAILABLE.search(proc.stdout)
    if proc.returncode != 0 or not found:
        said = [line for line in (proc.stderr or proc.stdout).splitlines()
                if line.strip() and not line.startswith("WARNING")]
        raise WatchError(f"{w.registry}: the registry did not answer ({said[-1] if said else proc.returncode})")
    return [v.strip() for v in found.group(1).split(",") if v.strip()]


def newer(recorded: str | None, available: list[str]) -> list[str]:
    """The releases of `available` newer than `recorded` (all of them when none is on record)."""
    floor = _version(recorded) if recorded else None
    return [v for v in available if (parsed := _version(v)) is not None
            and (floor is None or parsed > floor)]


def lines(results: Path, only: list[str] | None = None, index_url: str | None = None) -> list[str]:
    recorded = on_record(results)
    out = []
    for w in WATCHED:
        if only and w.registry not in only:
            continue
        have, date = recorded.get(w.registry, (None, ""))
        ahead = newer(have, on_registry(w, index_url))
        where = f"{have} on record ({date})" if have else "none on record"
        out.append(f"{w.label:22} {where:32} " + (
            f"newer on the registry: {', '.join(ahead[:6])}" + (" …" if len(ahead) > 6 else "")
            if ahead else "nothing newer on the registry"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="release_watch", description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=RESULTS,
                    help="the version matrix's records (default: results/versions)")
    ap.add_argument("--only", nargs="+", metavar="NAME", choices=[w.registry for w in WATCHED],
                    help="only these registry names")
    ap.add_argument("--index-url", metavar="URL", help="another registry (pip's --index-url)")
    args = ap.parse_args(argv)
    if not args.results.is_dir():
        print(f"release_watch: error: {args.results} is not a folder of records", file=sys.stderr)
        return 2
    try:
        print("\n".join(lines(args.results, args.only, args.index_url)))
    except (WatchError, subprocess.TimeoutExpired) as e:
        print(f"release_watch: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
