"""The version matrix: the criteria rules asked of every Keras 3 release on each backend, of
tf-keras with its TensorFlow, and of three PyTorch releases (2.15.0, newer than the pinned one).

    python -m pipeline.versions                 # every cell without a current record (resumable)
    python -m pipeline.versions --only keras-3.0.0-tensorflow keras-3.0.1-tensorflow
    python -m pipeline.versions --list          # the cells, and which have a current record
    python -m pipeline.versions --force         # run again cells that have a current record
    make versions                               # the first, with the project's Python

A cell is one environment running one snippet of snippets/versions/:
- a *base*: a virtual environment holding a backend at one release (TensorFlow with its
  tf-keras, JAX, PyTorch), installed from the package registry with pip and cached under
  .cache/versions/envs/;
- an *overlay*: a virtual environment that sees the base's packages through a .pth file and adds
  the Keras release (pip resolves what that release needs on top of the base).
The snippet runs with the runner (pipeline/running/runner.py), in the overlay's Python; a success becomes
a record under results/versions/<cell>/ (pipeline/records/store.py: the format of every record, the
environment in its provenance). Records are written one cell at a time, so an interrupted run
keeps what it finished and the next run starts where it stopped. The run ends with a one-screen
summary.

Which backend release goes with which Keras release: the newest TensorFlow whose own
requirements accept that Keras (TensorFlow 2.17 asks for keras>=3.2, 2.18 for >=3.5, 2.20 for
>=3.10, 2.21 for >=3.12), a JAX from the months of that Keras release (Keras declares none), and
the project's pinned PyTorch. Every cell's provenance lists what was installed.

The newest keras-nightly (KERAS_NIGHTLY) runs the same snippets, in cells named by its date
(keras-nightly-<date>-<backend>), never as a release. Two stacked LSTMs behind a mask
(keras-team/keras#23235) run in cells of their own (keras-<release>-stacked-mask-<backend>, and
the nightly's), on the pinned Keras release and the nightly only; so does a stateful GRU and LSTM
through backward() and fit() on PyTorch (keras-<release>-stateful-torch). Keras's
`mixed_float16` and `mixed_bfloat16` dtype policies on an LSTM and a GRU run in cells of their own
on every release and the nightly (keras-<release>-mixed-precision-<backend>), and on every
tf-keras (tf-keras-<release>-mixed-precision). A topic's cell runs in the environment of its
release's own cell (the same packages): nothing more is installed for it.

The cell `pinned-<backend>` is the project's own environment (no base, no download): CPU CI runs
it end to end.
"""
from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pipeline.records import machine, store as records
from pipeline.records.gpu_run import Parser
from pipeline.running import runner
from pipeline.running.files import write_atomic

RESULTS_DIR = records.MATRIX_DIR  # results/versions/
ENVS = Path("versions") / "envs"  # under .cache/
CACHES = Path("versions") / "runs"
SUMMARY_WIDTH = 100

# Keras 3: the newest patch of every minor release, and 3.0.0 beside 3.0.1 (3.0.0 sent
# right-padded masks to cuDNN on TensorFlow; 3.0.1 sent no mask at all).
KERAS = ("3.0.0", "3.0.1", "3.0.5", "3.1.1", "3.2.1", "3.3.3", "3.4.1", "3.5.0", "3.6.0",
         "3.7.0", "3.8.0", "3.9.2", "3.10.0", "3.11.3", "3.12.4", "3.13.2", "3.14.1", "3.15.1")
TF_KERAS = {"2.14": ("2.14.1", "2.14.1"), "2.15": ("2.15.1", "2.15.1"),
            "2.16": ("2.16.2", "2.16.0"), "2.17": ("2.17.1", "2.17.0"),
            "2.18": ("2.18.1", "2.18.0"), "2.19": ("2.19.1", "2.19.0"),
            "2.20": ("2.20.0", "2.20.1"), "2.21": ("2.21.0", "2.21.0")}  # TF, tf-keras
TORCH = ("2.13.0+cpu", "2.14.1", "2.15.0")
KERAS_TORCH = "2.14.1"  # the PyTorch every Keras release runs on here (the project's pin)
# (first Keras minor, TensorFlow minor): the newest TensorFlow whose requirements accept it.
_TF_FOR_KERAS = ((12, "2.21"), (10, "2.20"), (5, "2.19"), (2, "2.17"), (0, "2.16"))
# (first Keras minor, JAX release): from the months of that Keras release. Old jaxlib wheels were
# built against NumPy 1.
_JAX_FOR_KERAS = ((12, "0.10.2"), (9, "0.6.2"), (5, "0.4.38"), (2, "0.4.30"), (0, "0.4.23"))
_JAX_NUMPY1 = ("0.4.23", "0.4.30")
# The newest keras-nightly on the registry: the next release before it ships. A nightly is named
# by its date (its version's .devYYYYMMDDHH), never as a release.
KERAS_NIGHTLY = "3.16.0.dev2026102704"
# Stacked LSTMs behind a mask (keras-team/keras#23235): the pinned release and the nightly.
STACKED_MASK = ("3.15.1", KERAS_NIGHTLY)
# A stateful GRU and LSTM through backward() and fit() on the PyTorch backend, on the CPU
# (keras-team/keras#23462, #23464): the pinned release and the nightly.
STATEFUL = ("3.15.1", KERAS_NIGHTLY)
# Keras's mixed-precision dtype policies on an LSTM and a GRU: every release, and the nightly.
MIXED_PRECISION = KERAS + (KERAS_NIGHTLY,)
ON_THE_CPU = ("stateful",)  # topics whose snippet pretends no GPU
SNIPPETS = {"tensorflow": "versions/keras3_tensorflow.py", "jax": "versions/keras3_jax.py",
            "torch": "versions/keras3_torch.py", "tf-keras": "versions/tf_keras_rules.py",
            "pytorch": "versions/torch_rnn.py"}
TF_KERAS_MIXED = "versions/tf_keras_mixed_precision.py"


class BadInput(Exception):
    pass


@dataclass(frozen=True)
class Base:
    name: str  # folder under .cache/versions/envs/
    packages: tuple[str, ...]  # what pip installs (exact pins)


@dataclass(frozen=True)
class Cell:
    name: str  # folder under results/versions/
    label: str  # what a reader sees: "Keras 3.0.0, TensorFlow backend"
    snippet: str  # under snippets/
    base: Base | None  # None: the project's own environment
    extra: tuple[str, ...] = ()  # what pip adds in the overlay
    facts: dict = field(default_factory=dict, compare=False, hash=False)  # library, version, backend
    env: str = ""  # folder under .cache/versions/envs/ ("": the cell's name)


def nightly_date(version: str) -> str:
    """"3.16.0.dev2026102704" -> "2026-10-27": the day a nightly was built, from its version."""
    m = re.fullmatch(r"\d+\.\d+\.\d+\.dev(\d{4})(\d\d)(\d\d)\d*", version)
    if not m:
        raise BadInput(f"{version!r} is not a nightly's version (X.Y.Z.devYYYYMMDD...)")
    return "-".join(m.groups())


def _keras_cell(k: str, backend: str, topic: str = "") -> Cell:
    """One Keras release (or nightly) on one backend, running the cases (or `topic`'s snippet)."""
    names = {"tensorflow": "TensorFlow", "jax": "JAX", "torch": "PyTorch"}
    base = {"tensorflow": lambda: tf_base(_pick(_TF_FOR_KERAS, k)),
            "jax": lambda: jax_base(_pick(_JAX_FOR_KERAS, k)),
            "torch": lambda: torch_base(KERAS_TORCH)}[backend]()
    facts = {"library": "keras", "version": k, "backend": backend}
    if ".dev" in k:  # a nightly: its own distribution, named by its date
        facts["nightly"] = nightly_date(k)
        name, label, package = f"keras-nightly-{facts['nightly']}", \
            f"keras-nightly of {facts['nightly']}", f"keras-nightly=={k}"
    else:
        name, label, package = f"keras-{k}", f"Keras {k}", f"keras=={k}"
    snippet = SNIPPETS[backend]
    if topic:
        facts["topic"] = topic
        name += f"-{topic}"
        snippet = f"versions/keras3_{topic.replace('-', '_')}_{backend}.py"
        label += f" ({topic.replace('-', ' ')})"
    # Keras imports `packaging` without asking for it; TensorFlow brings it, the JAX and PyTorch
    # bases do not.
    extra = (package,) + (("packaging==26.3",) if backend != "tensorflow" else ())
    # a topic runs in the release's own environment: the same packages, installed once
    return Cell(f"{name}-{backend}", label.replace(" (", f", {names[backend]} backend (", 1)
                if topic else f"{label}, {names[backend]} backend", snippet, base, extra, facts,
                env=f"{name.removesuffix('-' + topic) if topic else name}-{backend}")


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def _pick(table, version: str) -> str:
    return next(v for first, v in table if _minor(version) >= first)


def tf_base(minor: str) -> Base:
    tf, tfk = TF_KERAS[minor]
    return Base(f"tensorflow-{tf}", (f"tensorflow=={tf}", f"tf-keras=={tfk}"))


def jax_base(version: str) -> Base:
    numpy = ("numpy==1.26.4",) if version in _JAX_NUMPY1 else ()
    return Base(f"jax-{version}", (f"jax=={version}", f"jaxlib=={version}") + numpy)


def torch_base(version: str) -> Base:
    return Base(f"torch-{version}", (f"torch=={version}",))


def all_cells() -> list[Cell]:
    cells = [_keras_cell(k, b) for k in KERAS + (KERAS_NIGHTLY,)
             for b in ("tensorflow", "jax", "torch")]
    for minor, (tf, tfk) in TF_KERAS.items():
        cells.append(Cell(f"tf-keras-{tfk}", f"tf-keras {tfk}, TensorFlow {tf}",
                          SNIPPETS["tf-keras"], tf_base(minor), (),
                          {"library": "tf-keras", "version": tfk, "backend": "tensorflow"}))
    for version in TORCH:
        cells.append(Cell(f"torch-{version}", f"PyTorch {version}", SNIPPETS["pytorch"],
                          torch_base(version), (),
                          {"library": "torch", "version": version.split("+")[0]}))
    cells += [_keras_cell(k, b, "stacked-mask") for k in STACKED_MASK
              for b in ("tensorflow", "jax", "torch")]
    cells += [_keras_cell(k, "torch", "stateful") for k in STATEFUL]
    cells += [_keras_cell(k, b, "mixed-precision") for k in MIXED_PRECISION
              for b in ("tensorflow", "jax", "torch")]
    cells += [Cell(f"tf-keras-{tfk}-mixed-precision",
                   f"tf-keras {tfk}, TensorFlow {tf} (mixed precision)", TF_KERAS_MIXED,
                   tf_base(minor), (), {"library": "tf-keras", "version": tfk,
                                        "backend": "tensorflow", "topic": "mixed-precision"},
                   env=f"tf-keras-{tfk}") for minor, (tf, tfk) in TF_KERAS.items()]
    return cells


def pinned_cells() -> list[Cell]:
    """The project's own environment: nothing installed, nothing downloaded."""
    return [Cell(f"pinned-{b}", f"the project's pinned Keras, {b} backend", SNIPPETS[b], None, (),
                 {"library": "keras", "backend": b, "pinned": True})
            for b in ("tensorflow", "jax", "torch")] + [
        Cell(f"pinned-stacked-mask-{b}", f"the project's pinned Keras, {b} backend, stacked masks",
             f"versions/keras3_stacked_mask_{b}.py", None, (),
             {"library": "keras", "backend": b, "pinned": True, "topic": "stacked-mask"})
        for b in ("tensorflow", "jax", "torch")] + [
        Cell("pinned-stateful-torch", "the project's pinned Keras, torch backend, stateful",
             "versions/keras3_stateful_torch.py", None, (),
             {"library": "keras", "backend": "torch", "pinned": True, "topic": "stateful"})] + [
        Cell(f"pinned-mixed-precision-{b}",
             f"the project's pinned Keras, {b} backend, mixed precision",
             f"versions/keras3_mixed_precision_{b}.py", None, (),
             {"library": "keras", "backend": b, "pinned": True, "topic": "mixed-precision"},
             env=f"pinned-{b}") for b in ("tensorflow", "jax", "torch")] + [
        Cell("pinned-tf-keras-mixed-precision", "the project's pinned tf-keras, mixed precision",
             TF_KERAS_MIXED, None, (), {"library": "tf-keras", "backend": "tensorflow",
                                        "pinned": True, "topic": "mixed-precision"},
             env="pinned-tensorflow")]


# --- environments --------------------------------------------------------------------------------

def _site_packages(env: Path) -> Path:
    return env / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def _python(env: Path) -> Path:
    return env / "bin" / "python"


def _pip(python: Path, args: list[str], log: Path) -> None:
    """pip, run by this Python for the target interpreter (`pip --python`): the environments
    need no pip of their own."""
    cmd = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check",
           "install", "--quiet", *args]
    with open(log, "a") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["?"]
        raise BadInput(f"pip failed (exit {done.returncode}): {tail[0][:200]} (log: {log})")


def _freeze(python: Path) -> dict[str, str]:
    """{distribution: version} as the environment's own Python sees it (overlay first)."""
    code = ("import importlib.metadata as m, json; d={}\n"
            "for x in m.distributions():\n"
            "    n=x.metadata['Name']\n"
            "    if n and n.lower() not in d: d[n.lower()]=x.version\n"
            "print(json.dumps(d, sort_keys=True))")
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _make_env(path: Path, spec: dict, build) -> Path:
    """A virtual environment at `path` built by `build(path)`, unless one built from the same
    spec is ready there. Built beside and renamed into place: an interrupted build leaves
    nothing that looks ready."""
    stamp = path / "ready.json"
    if stamp.is_file():
        try:
            if json.loads(stamp.read_text())["spec"] == spec and _python(path).exists():
                return path
        except (ValueError, KeyError):
            pass
    # The path is baked into the environment's scripts and .pth files: it is built in place, and
    # counts as ready only once its stamp is written.
    shutil.rmtree(path, ignore_errors=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    try:
        build(path)
        write_atomic(stamp, json.dumps({"spec": spec, "packages": _freeze(_python(path))},
                                       indent=1, sort_keys=True))
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
    return path


def ensure_base(cache: Path, base: Base) -> Path:
    path = cache / ENVS / f"base-{base.name}"
    return _make_env(path, {"packages": list(base.packages)},
                     lambda p: _pip(_python(p), list(base.packages), p / "pip.log"))


_base_locks: dict[str, threading.Lock] = {}
_env_locks: dict[str, threading.Lock] = {}
_locks_lock = threading.Lock()


def ensure_cell_env(cache: Path, cell: Cell) -> Path:
    """The overlay of a cell: the base's packages (or the project's own) beneath, the cell's
    extra packages on top."""
    if cell.base is None:
        beneath = Path(sysconfig.get_paths()["purelib"])  # the project's environment
        spec = {"beneath": str(beneath), "extra": list(cell.extra)}
    else:
        with _locks_lock:
            lock = _base_locks.setdefault(cell.base.name, threading.Lock())
        with lock:  # two cells on one base: the first builds it, the second waits
            beneath = _site_packages(ensure_base(cache, cell.base))
        spec = {"base": cell.base.name, "base_packages": list(cell.base.packages),
                "extra": list(cell.extra)}

    def build(path: Path) -> None:
        (_site_packages(path) / "_matrix_base.pth").write_text(str(beneath) + "\n")
        if cell.extra:
            _pip(_python(path), list(cell.extra), path / "pip.log")
    name = cell.env or cell.name
    with _locks_lock:
        lock = _env_locks.setdefault(name, threading.Lock())
    with lock:  # two cells in one environment: the first builds it, the second waits
        return _make_env(cache / ENVS / name, spec, build)


# --- running ---------------------------------------------------------------------------------------

def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def cell_provenance(cell: Cell, env: Path) -> dict:
    """What a record says about where it ran: this CPU (no GPU: one is pretended), and the
    environment's packages, as installed."""
    stamp = json.loads((env / "ready.json").read_text())
    # Distribution names as pip writes them (PEP 503): tf_keras and tf-keras are one package.
    packages = {re.sub(r"[-_.]+", "-", k).lower(): v for k, v in stamp["packages"].items()}
    shown = {k: packages[k] for k in machine.DISTRIBUTIONS if k in packages}
    if "keras-nightly" in packages:  # its `keras` shadows a base's (TensorFlow brings one)
        shown["keras"] = shown["keras-nightly"] = packages["keras-nightly"]
    return {"machine": f"CPU: {machine.cpu_model()} ({os.cpu_count()} cores)",
            "gpu": "none: run on the CPU, as it is" if cell.facts.get("topic") in ON_THE_CPU
            else "none: each framework's own decision code runs with a GPU pretended",
            "cell": cell.name, "label": cell.label, **cell.facts,
            "installed": list(cell.base.packages if cell.base else ()) + list(cell.extra),
            "frameworks": shown, "packages": packages,
            "python": sys.version.split()[0], "platform": platform.platform(),
            "date": _now()}


def run_cell(project: runner.Project, results: Path, cell: Cell, log=print) -> dict:
    """Build the cell's environment, run its snippet, record a success. Returns what happened."""
    cache = project.cache
    state = {"cell": cell.name, "label": cell.label, "snippet": cell.snippet, "status": None,
             "problem": "", "started_at": _now()}
    try:
        env = ensure_cell_env(cache, cell)
    except (BadInput, subprocess.CalledProcessError, OSError) as e:
        state.update(status="env-failed", problem=str(e))
        return state
    cell_project = runner.Project(project.root, snippets=project.snippets,
                                  cache=cache / CACHES / cell.name,
                                  requirements=[env / "ready.json"], python=str(_python(env)))
    [outcome] = runner.run_all(cell_project, only=[cell.snippet], jobs=1)
    state.update(status=outcome.status, problem=outcome.problem, seconds=round(outcome.seconds, 1),
                 executed=outcome.executed)
    if outcome.status != runner.OK:
        state["stderr_tail"] = outcome.stderr_tail()
        return state
    prov = cell_provenance(cell, env)
    source = records.source_hash(outcome.snippet, project.snippets)
    if not records.already(results, cell.name, cell.snippet, outcome.finished_at, source):
        records.write(results, cell.name, Path(outcome.data_dir).parent, source, prov)
        records.write_machine(results, cell.name, {"provenance": prov, "cell": {
            "name": cell.name, "label": cell.label, "snippet": cell.snippet, **cell.facts}})
    return state


def current_cells(results: Path, snippets: Path) -> set[str]:
    """Cells with a record of their snippet made by the snippet as it is now."""
    try:
        machines = records.load_all(results, snippets)
    except records.RecordError:
        return set()
    return {m.slug for m in machines if any(not r.stale for r in m.records)}


def summary_lines(cells: list[Cell], done: dict[str, dict], current: set[str], where: str) -> list[str]:
    """One screen: a grid of Keras releases by backend, then tf-keras and PyTorch."""
    def mark(name: str) -> str:
        state = done.get(name)
        if state is None:
            return "ok" if name in current else "-"
        return "ok" if state["status"] == runner.OK else "FAIL"
    lines = []
    keras = [c for c in cells if c.facts.get("library") == "keras" and not c.facts.get("pinned")
             and not c.facts.get("nightly") and not c.facts.get("topic")]
    if keras:
        lines.append(f"{'Keras':8} {'tensorflow':>11} {'jax':>6} {'torch':>6}")
        for v in dict.fromkeys(c.facts["version"] for c in keras):
            lines.append(f"{v:8} " + " ".join(
                f"{mark(f'keras-{v}-{b}'):>{w}}" for b, w in
                (("tensorflow", 11), ("jax", 6), ("torch", 6))))
    for c in cells:
        if c not in keras:
            lines.append(f"{c.label:42} {mark(c.name)}")
    ran = [s for s in done.values()]
    bad = [s for s in ran if s["status"] != runner.OK]
    lines.append(f"cells: {len(ran)} run now ({len(ran) - len(bad)} recorded, {len(bad)} failed); "
                 f"{len([c for c in cells if c.name in current and c.name not in done])} "
                 "already current")
    for s in bad:
        lines += textwrap.wrap(f"FAILED {s['cell']}: {s['status']} {s['problem']}", SUMMARY_WIDTH,
                               subsequent_indent="    ")[:3]
    lines.append(f"records: {where}/ (commit them with `git add {where}`)")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="versions", description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path("."), help="the project folder")
    ap.add_argument("--results", type=Path, help="where records go (default: ROOT/results/versions)")
    ap.add_argument("--cache", type=Path, help="environments and runs (default: ROOT/.cache)")
    ap.add_argument("--only", nargs="+", metavar="CELL", help="only these cells (see --list)")
    ap.add_argument("--list", action="store_true", help="list the cells and stop")
    ap.add_argument("--force", action="store_true", help="run cells that have a current record")
    ap.add_argument("--jobs", type=int, default=2, help="cells at once (default 2)")
    args = ap.parse_args(argv)
    project = runner.Project(args.root, cache=args.cache)
    results = (args.results or project.root / "results" / RESULTS_DIR).resolve()
    every = all_cells() + pinned_cells()
    by_name = {c.name: c for c in every}
    unknown = [n for n in args.only or [] if n not in by_name]
    if unknown:
        print(f"versions: error: no such cell: {', '.join(unknown)} (see --list)", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("versions: error: --jobs must be at least 1", file=sys.stderr)
        return 2
    if results.exists() and not results.is_dir():
        print(f"versions: error: --results {results} is not a folder", file=sys.stderr)
        return 2
    pinned = [n for n in args.only or [] if by_name[n].base is None]
    if pinned and results == (project.root / "results" / RESULTS_DIR).resolve():
        print(f"versions: error: {pinned[0]} is the project's own environment, not a release: "
              "it is for tests, and its records go elsewhere (--results DIR)", file=sys.stderr)
        return 2
    current = current_cells(results, project.snippets)
    chosen = [by_name[n] for n in args.only] if args.only else all_cells()
    where = results.relative_to(project.root).as_posix() if results.is_relative_to(project.root) \
        else str(results)
    if args.list:
        for c in every:
            print(f"{c.name:28} {'current' if c.name in current else '-':8} {c.label}")
        return 0
    todo = [c for c in chosen if args.force or c.name not in current]
    print(f"{len(todo)} cell(s) to run, {len(chosen) - len(todo)} already current; "
          f"records go to {where}/", flush=True)
    done: dict[str, dict] = {}
    for name in ("TF_USE_LEGACY_KERAS", "KERAS_BACKEND"):  # each snippet chooses its own
        os.environ.pop(name, None)

    def one(cell: Cell) -> None:
        state = run_cell(project, results, cell)
        done[cell.name] = state
        print(f"{state['status']:10} {cell.name}" + (f"  ({state['problem']})"
                                                      if state["problem"] else ""), flush=True)
        if state.get("stderr_tail"):
            print("    " + state["stderr_tail"].replace("\n", "\n    "), flush=True)
    try:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            list(pool.map(one, todo))
    except KeyboardInterrupt:
        print(f"versions: interrupted; {len(done)} cell(s) finished, their records kept",
              file=sys.stderr)
        return 130
    print()
    current = current_cells(results, project.snippets)
    for line in summary_lines(chosen, done, current, where):
        print(line)
    return 1 if any(s["status"] != runner.OK for s in done.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
