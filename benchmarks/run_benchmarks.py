"""Run the benchmark snippets on this machine and record them under results/ to commit.

    python benchmarks/run_benchmarks.py                 # every benchmark, BENCH_SCALE=1
    python benchmarks/run_benchmarks.py --scale 8       # larger sizes, for a GPU
    python benchmarks/run_benchmarks.py --only unroll_sweep --machine my-laptop

Each benchmark snippet (snippets/benchmarks/*.py) runs in its own process, alone, through the
site's runner, and becomes a record under results/<machine>/ (pipeline/records/store.py): the same
records a GPU run (`make gpu-run`) leaves, with the machine's provenance. The site's charts
draw every machine's records next to the build's own run. The GPU is used when a framework
sees one; a benchmark that needs a GPU is skipped on a machine without one.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets" / "benchmarks"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(SNIPPETS))
from pipeline.pages import charts  # noqa: E402
from pipeline.records import gpu_run, store as records  # noqa: E402
from pipeline.running import runner  # noqa: E402

NEEDS_GPU_EXIT = 77


class BadInput(Exception):
    pass


def benchmark_snippets(only: list[str] | None = None) -> list[Path]:
    found = sorted(p for p in SNIPPETS.glob("*.py") if not p.name.startswith("_"))
    if not only:
        return found
    by_name = {p.stem: p for p in found}
    unknown = [name for name in only if name not in by_name]
    if unknown:
        raise BadInput(f"unknown benchmark {', '.join(unknown)}; known: {', '.join(by_name)}")
    return [by_name[name] for name in only]


def run_set(data_dir: Path, *, scale: int = 1, only: list[str] | None = None,
            log=print) -> dict[str, dict]:
    """Run each benchmark snippet once; return {benchmark: result data}. Raises on a failure."""
    data_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, SNIPPET_DATA_DIR=str(data_dir), BENCH_SCALE=str(scale),
               PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="2")
    results = {}
    for path in benchmark_snippets(only):
        before = {p.name for p in data_dir.glob("*.json")}
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, str(path)], cwd=data_dir, env=env,
                              capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if proc.returncode == NEEDS_GPU_EXIT:
            log(f"skipped  {path.stem}: needs a GPU")
            continue
        if proc.returncode != 0:
            tail = "\n".join(proc.stderr.strip().splitlines()[-10:])
            raise RuntimeError(f"{path.name} failed (exit {proc.returncode}):\n{tail}")
        new = sorted({p.name for p in data_dir.glob("*.json")} - before) or [f"{path.stem}.json"]
        for name in new:
            data = charts.load_result(data_dir / name)
            key = data["benchmark"]  # several snippets may write one benchmark (one per framework)
            results[key if key not in results else f"{key} ({path.stem})"] = data
        log(f"ran      {path.stem} in {seconds:.1f} s")
    return results


# The GPU run's command-line rules: a positive whole number, one clear line and exit 2 on bad input.
positive_int, Parser = gpu_run.positive_int, gpu_run.Parser


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="run_benchmarks.py", description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=positive_int, default=1,
                    help="BENCH_SCALE: size multiplier (1 fits a 2-core CPU)")
    ap.add_argument("--only", nargs="+", metavar="BENCHMARK", help="only these benchmarks")
    ap.add_argument("--machine", help="the machine's folder under results/ (default: from "
                                      "its GPU or CPU)")
    ap.add_argument("--results", type=Path, default=ROOT / "results",
                    help="where to write (default: results/)")
    args = ap.parse_args(argv)
    try:
        paths = benchmark_snippets(args.only)
        gpu_run.refuse_test_settings()
        if args.machine is not None:
            records.machine_slug(args.machine)
        if args.results.exists() and not args.results.is_dir():
            raise BadInput(f"--results {args.results} is not a folder")
    except (BadInput, gpu_run.BadInput, records.RecordError) as e:
        print(f"run_benchmarks.py: error: {e}", file=sys.stderr)
        return 2
    os.environ["BENCH_SCALE"] = str(args.scale)  # part of each cache key and each result
    project = runner.Project(ROOT)
    status, _ = gpu_run.record_run(
        project, args.results.resolve(), machine_name=args.machine, tests=False,
        only=[p.relative_to(project.snippets).as_posix() for p in paths])
    return status


if __name__ == "__main__":
    sys.exit(main())
