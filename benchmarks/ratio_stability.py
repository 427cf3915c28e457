"""Run the benchmark set twice and print how much each speed-up ratio moved between the runs.

    python benchmarks/ratio_stability.py                  # run everything twice (about 2 x 75 s)
    python benchmarks/ratio_stability.py --only unroll_sweep batch_size_sweep
    python benchmarks/ratio_stability.py --compare DIR_A DIR_B   # two folders of result JSON
    python benchmarks/ratio_stability.py --check          # exit 1 if a ratio moved > --target

A ratio is a row's median divided by the median of the first row measured at the same x, the
same "mode" (train or inference) and the same "layer" (LSTM or GRU) in that benchmark: for example
"LSTM recurrent_dropout=0.2 · train" over "LSTM default · train". Absolute times move with the machine's load; the ratios are
what the site's prose relies on, so they should move by less than the target (10 %). Result files
that already hold ratios (with "relative_to") are compared as they are.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_benchmarks import BadInput, Parser, charts, positive_int, run_set  # noqa: E402


def ratios(data: dict) -> dict[str, float]:
    """{row label: median / reference median} for every row that is not its own reference."""
    out, refs = {}, {}
    if data.get("relative_to"):  # rows are already ratios (to the row named there)
        return {f"{r['variant']} @ {r.get('x')} / {data['relative_to']}": r["median"]
                for r in data["results"]}
    for r in data["results"]:
        group = (r.get("x"), r.get("mode"), r.get("layer"))  # GRU rows against the GRU default
        ref = refs.setdefault(group, r)
        if ref is r:
            continue
        label = r["variant"] + (f" @ {r['x']}" if r.get("x") is not None else "")
        ref_label = ref["variant"] + (f" @ {ref['x']}" if ref.get("x") is not None else "")
        out[f"{label} / {ref_label}"] = r["median"] / ref["median"]
    return out


def compare(first: dict[str, dict], second: dict[str, dict]) -> list[tuple]:
    """Rows (benchmark, ratio name, first, second, moved %) for ratios present in both runs."""
    rows = []
    for bench in sorted(set(first) & set(second)):
        a, b = ratios(first[bench]), ratios(second[bench])
        for name in a:
            if name in b:
                rows.append((bench, name, a[name], b[name], abs(b[name] / a[name] - 1) * 100))
    return rows


def load_dir(folder: Path) -> dict[str, dict]:
    if not folder.is_dir():
        raise BadInput(f"{folder} is not a folder")
    found = {}
    for path in sorted(folder.glob("*.json")):
        try:
            data = charts.load_result(path)
        except charts.ChartError as e:
            raise BadInput(str(e))
        found[data["benchmark"]] = data
    if not found:
        raise BadInput(f"{folder} holds no result files")
    return found


def report(rows: list[tuple], target: float) -> int:
    if not rows:
        print("no ratio is present in both runs")
        return 0
    width = max(len(r[1]) for r in rows)
    print(f"{'benchmark':24} {'ratio':{width}} {'run 1':>7} {'run 2':>7} {'moved':>7}")
    for bench, name, a, b, moved in rows:
        flag = "" if moved <= target else "  <-- beyond target"
        print(f"{bench:24} {name:{width}} {a:7.3f} {b:7.3f} {moved:6.1f}%{flag}")
    beyond = [r for r in rows if r[4] > target]
    print(f"{len(rows) - len(beyond)} of {len(rows)} ratios moved by at most {target:g} %; "
          f"largest move {max(r[4] for r in rows):.1f} %")
    return len(beyond)


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="ratio_stability.py", description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", metavar="BENCHMARK")
    ap.add_argument("--scale", type=positive_int, default=1)
    ap.add_argument("--target", type=float, default=10.0, help="allowed move in %% (10)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a ratio moved more")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("DIR_A", "DIR_B"))
    args = ap.parse_args(argv)
    if args.target <= 0:
        ap.error(f"--target must be above 0, got {args.target:g}")
    try:
        if args.compare:
            first, second = (load_dir(d) for d in args.compare)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                first = run_set(Path(tmp, "1"), scale=args.scale, only=args.only)
                second = run_set(Path(tmp, "2"), scale=args.scale, only=args.only)
    except BadInput as e:
        print(f"ratio_stability.py: error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"ratio_stability.py: {e}", file=sys.stderr)
        return 1
    beyond = report(compare(first, second), args.target)
    return 1 if args.check and beyond else 0


if __name__ == "__main__":
    sys.exit(main())
