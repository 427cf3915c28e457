"""`make gpu-run` (pipeline/records/gpu_run.py) on a pretend GPU machine: a fake nvidia-smi and nvcc on
PATH, tiny snippets and tests in a throw-away project. What is checked is the run's behaviour
(records, skips, failures, the summary, an interruption), never a GPU figure."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import REPO
from pipeline.records import gpu_run as gpu_run_module, machine, store as records
from pipeline.running import device

FAKE_SMI = """\
#!/bin/sh
case "$1" in
  --query-gpu=name) echo "Test Card" ;;
  --query-gpu=name,driver_version,memory.total,compute_cap) {compute_cap} ;;
  --query-gpu=name,driver_version,memory.total) echo "Test Card, 555.42, 16384 MiB" ;;
  "") echo "| NVIDIA-SMI 555.42      Driver Version: 555.42      CUDA Version: 12.5     |" ;;
  *) exit 2 ;;
esac
"""
FAKE_NVCC = """\
#!/bin/sh
echo "nvcc: NVIDIA (R) Cuda compiler driver"
echo "Cuda compilation tools, release 12.4, V12.4.131"
"""
MISSING = """\
import sys
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'tensorflow':
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Missing())
"""


def _script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def gpu_box(tmp_path, monkeypatch):
    """PATH and CUDA_HOME of a pretend GPU machine (driver 555.42, CUDA 12.5, toolkit 12.4,
    cuDNN 9.1.0 from NVIDIA's packages); returns the environment for a child process."""
    bin_dir = tmp_path / "fake-bin"
    _script(bin_dir / "nvidia-smi",
            FAKE_SMI.format(compute_cap='echo "Test Card, 555.42, 16384 MiB, 8.9"'))
    cuda = tmp_path / "fake-cuda"
    _script(cuda / "bin" / "nvcc", FAKE_NVCC)
    (cuda / "include").mkdir()
    (cuda / "include" / "cudnn_version.h").write_text(
        "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n")
    env = {k: v for k, v in os.environ.items() if k not in ("SNIPPETS_DEVICE", "BENCH_SCALE")}
    env.update(PATH=f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin", CUDA_HOME=str(cuda),
               PYTHONPATH=str(REPO), NO_MKDOCS_2_WARNING="1")
    for k in ("PATH", "CUDA_HOME"):
        monkeypatch.setenv(k, env[k])
    monkeypatch.delenv("SNIPPETS_DEVICE", raising=False)
    from pipeline.running import device
    device.device_kind.cache_clear()
    yield env
    device.device_kind.cache_clear()


def test_provenance_reads_the_gpu_driver_toolkit_cudnn_and_packages(gpu_box, tmp_path):
    p = machine.provenance()
    assert p["machine"] == "GPU: Test Card"
    assert (p["gpu_name"], p["driver"], p["gpu_memory"], p["gpu_compute_capability"],
            p["gpu_count"]) == ("Test Card", "555.42", "16384 MiB", "8.9", 1)
    assert p["cuda_driver_supports"] == "12.5"
    assert p["cuda_toolkit"] == f"12.4 ({tmp_path}/fake-cuda/bin/nvcc)"
    assert p["cudnn_system"] == f"9.1.0 ({tmp_path}/fake-cuda/include)"
    import importlib.metadata as md
    assert p["packages"]["torch"] == md.version("torch")
    assert p["packages"]["nvidia-cudnn-cu12"] == md.version("nvidia-cudnn-cu12")
    # What TensorFlow itself answers (the probe reads the same dict without importing it).
    import tensorflow as tf
    built = tf.sysconfig.get_build_info()
    assert (p["tensorflow_built_with_cuda"], p["tensorflow_built_with_cudnn"]) == (
        built["cuda_version"], built["cudnn_version"])
    import torch  # what PyTorch itself says, or nothing when it has no cuDNN: nothing made up
    assert p.get("torch_cuda") == torch.version.cuda
    assert p.get("torch_cudnn") == (torch.backends.cudnn.version()
                                    if torch.backends.cudnn.is_available() else None)
    for key in ("python", "platform", "cpu_model", "cpu_cores", "date"):
        assert p[key], key


def test_provenance_with_an_old_driver_and_without_a_gpu(gpu_box, tmp_path, monkeypatch):
    _script(tmp_path / "fake-bin" / "nvidia-smi", FAKE_SMI.format(compute_cap="exit 6"))
    info = machine.gpu_info()
    assert info["gpu_name"] == "Test Card" and "gpu_compute_capability" not in info
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert machine.gpu_info() == {}


def _project(root: Path) -> Path:
    """Snippets that succeed, need a GPU, lack TensorFlow, fail; tests likewise."""
    files = {
        "snippets/t/ok.py": "import os, pathlib\n"
                            "pathlib.Path(os.environ['SNIPPET_DATA_DIR'], 'demo.json').write_text('{}')\n"
                            "print('hello from the card')\n",
        "snippets/t/gpu.py": "# snippet: needs=gpu\nprint('ran where a GPU is')\n",
        "snippets/t/scale.py": "import os\nprint('scale', os.environ['BENCH_SCALE'])\n",
        "snippets/t/tf.py": MISSING + "import tensorflow\n",
        "snippets/t/bad.py": "import sys\nprint('broken on purpose', file=sys.stderr)\n"
                             "raise SystemExit(3)\n",
        "requirements.txt": "nothing==1\n",
        "pytest.ini": "[pytest]\nmarkers =\n    gpu: needs a GPU\n",
        "tests/conftest.py": "",
        "tests/test_gpu_a.py": textwrap.dedent("""\
            import pytest
            @pytest.mark.gpu
            def test_passes(): pass
            @pytest.mark.gpu
            def test_skips(): pytest.skip("needs JAX: not installed")
            @pytest.mark.gpu
            def test_cannot_see_the_gpu(): pytest.skip("needs a GPU visible to PyTorch")
            def test_not_gpu(): raise AssertionError("only gpu tests run")
            """),
        "tests/test_gpu_b.py": MISSING + "import pytest\npytestmark = pytest.mark.gpu\n"
                                         "import tensorflow\ndef test_x(): pass\n",
        "tests/test_gpu_c.py": "import pytest\n@pytest.mark.gpu\n"
                               "def test_fails(): assert 1 == 2, 'the kernel was wrong'\n",
        "tests/test_cpu_only.py": "import not_installed_here\n",  # never collected
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def gpu_run(root: Path, env: dict, *args: str, timeout: float = 300):
    return subprocess.run([sys.executable, "-m", "pipeline.gpu_run", "--root", str(root), *args],
                          cwd=root, env=env, capture_output=True, text=True, timeout=timeout)


def test_a_gpu_run_records_what_ran_skips_missing_frameworks_and_reports_failures(
        gpu_box, tmp_path):
    root = _project(tmp_path / "project")
    proc = gpu_run(root, gpu_box, "--scale", "2")
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr  # one snippet and one test failed
    folder = root / "results" / "test-card"
    (m,) = records.load_all(root / "results", root / "snippets")
    assert m.slug == "test-card"
    assert sorted(r.snippet for r in m.records) == ["t/gpu.py", "t/ok.py", "t/scale.py"]
    ok = next(r for r in m.records if r.snippet == "t/ok.py")
    assert ok.data["stdout"] == "hello from the card\n" and not ok.stale
    assert ok.data["device"] == "GPU: Test Card" and (ok.data_dir / "demo.json").is_file()
    assert ok.data["provenance"]["driver"] == "555.42"
    scale = next(r for r in m.records if r.snippet == "t/scale.py")
    assert scale.data["stdout"] == "scale 2\n"
    info = json.loads((folder / "machine.json").read_text())
    run = info["run"]
    assert info["provenance"]["gpu_name"] == "Test Card" and run["finished_at"]
    assert run["skipped"] == {"t/tf.py": "needs TensorFlow"}
    assert run["failed"] == {"t/bad.py": "exit status 3"}
    assert sorted(run["recorded"]) == ["t/gpu.py", "t/ok.py", "t/scale.py"]
    assert run["bench_scale"] == 2
    tests = run["gpu_tests"]
    # A skip that names no missing framework fails a GPU run: the GPU is there, so a test that
    # cannot see it is a broken install, not a pass.
    assert tests["passed"] == 1 and sorted(tests["failed"]) == [
        "tests.test_gpu_a::test_cannot_see_the_gpu", "tests.test_gpu_c::test_fails"]
    assert tests["failed"]["tests.test_gpu_a::test_cannot_see_the_gpu"] == (
        "skipped on a GPU machine: needs a GPU visible to PyTorch")
    assert "the kernel was wrong" in tests["failed"]["tests.test_gpu_c::test_fails"]
    assert tests["skipped"] == {"needs JAX: not installed": ["tests.test_gpu_a::test_skips"],
                                "needs TensorFlow": ["tests.test_gpu_b"]}
    # The summary: one screen, what ran, what was skipped and why, what failed, where.
    summary = out.split("\n\n", 1)[1].splitlines()
    assert len(summary) <= 24, out
    text = "\n".join(summary)
    assert summary[0].startswith("Run on GPU: Test Card (driver 555.42, CUDA 12.5")
    assert "snippets: 3 recorded, 1 skipped, 1 failed" in text
    assert "skipped, needs TensorFlow (1): t/tf.py" in text
    assert "FAILED t/bad.py: exit status 3" in text and "broken on purpose" in out
    assert "GPU tests: 1 passed, 2 failed, 2 skipped" in text
    assert "records: results/test-card/ (machine.json and 3 snippets)" in text
    assert "git add results/test-card" in text
    # Again: what succeeded comes from the cache; its record is already there and stays as it is.
    before = (ok.path / "result.json").stat().st_mtime_ns
    again = gpu_run(root, gpu_box, "--scale", "2", "--no-tests")
    assert "cached" in again.stdout and again.returncode == 1
    assert (ok.path / "result.json").stat().st_mtime_ns == before
    assert records.load_all(root / "results", root / "snippets")[0].records[1].data == ok.data


def _running(path: Path) -> bool:
    """Whether the snippet runs: as its program (pipeline/running/program.py), `python NAME.py` in a work
    folder under the project's .cache."""
    project = path.parent.parent
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
            if path.name.encode() in args and Path(os.readlink(proc / "cwd")).is_relative_to(project):
                return True
        except OSError:
            pass
    return False


def test_an_interrupted_run_keeps_the_records_it_finished(gpu_box, tmp_path):
    root = tmp_path / "project"
    (root / "snippets").mkdir(parents=True)
    (root / "requirements.txt").write_text("nothing==1\n")
    (root / "snippets" / "a.py").write_text("print('finished')\n")
    slow = root / "snippets" / "z.py"
    slow.write_text("# snippet: exclusive timeout=120\nimport time\nprint('started', flush=True)\n"
                    "time.sleep(100)\n")
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.gpu_run", "--root", str(root),
                             "--no-tests"], cwd=root, env=gpu_box, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    machine_file = root / "results" / "test-card" / "machine.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (
            machine_file.is_file() and "a.py" in machine_file.read_text() and _running(slow)):
        time.sleep(0.2)
    assert _running(slow), "the slow snippet never started"
    proc.send_signal(signal.SIGTERM)  # as a cancelled CI job
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err, err
    assert "1 record(s) kept in results/test-card/" in err
    (m,) = records.load_all(root / "results", root / "snippets")
    assert [r.snippet for r in m.records] == ["a.py"]
    assert m.records[0].data["stdout"] == "finished\n"
    assert m.data["run"]["finished_at"] is None and m.data["run"]["recorded"] == ["a.py"]
    time.sleep(0.5)
    assert not _running(slow), "the interrupted snippet is still running"


@pytest.mark.parametrize("args, says", [
    (["--only", "t/none.py"], "no such snippet: t/none.py"), (["--machine", "!!!"], "machine name"),
    (["--scale", "0"], "--scale"), (["--jobs", "x"], "--jobs")])
def test_bad_input_is_one_line_and_writes_nothing(gpu_box, tmp_path, args, says):
    root = _project(tmp_path / "project")
    proc = gpu_run(root, gpu_box, *args)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (root / "results").exists()


def test_without_a_gpu_it_refuses_and_says_what_to_run_instead(tmp_path):
    root = _project(tmp_path / "project")
    env = {**os.environ, "SNIPPETS_DEVICE": "CPU", "PYTHONPATH": str(REPO)}
    proc = gpu_run(root, env)
    assert proc.returncode == 2 and "no CUDA GPU visible" in proc.stderr
    assert "run_benchmarks.py" in proc.stderr and not (root / "results").exists()


def _make_n(*args: str) -> list[str]:
    r = subprocess.run(["make", "-n", "--no-print-directory", "-C", str(REPO), *args],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_make_gpu_run_with_a_python_uses_it_as_it_is():
    assert _make_n("gpu-run", "PYTHON=/usr/bin/python3") == ["/usr/bin/python3 -m pipeline.gpu_run "]
    with_args = _make_n("gpu-run", "PYTHON=python3", "GPU_RUN_ARGS=--machine lab --no-tests")
    assert with_args == ["python3 -m pipeline.gpu_run --machine lab --no-tests"]


def test_make_gpu_run_without_a_python_sets_up_the_gpu_environment_first(tmp_path):
    stamp = REPO / ".venv" / ".gpu-installed"
    if stamp.exists():
        pytest.skip("this checkout's .venv is already the GPU one")
    lines = _make_n("gpu-run")
    assert any("pip install" in ln and "tensorflow[and-cuda]" in ln for ln in lines), lines
    assert lines[-1].strip() == ".venv/bin/python -m pipeline.gpu_run"


# --- a lent machine's run: the plan, the carried wheels, the budget, the archive ----------------

def _wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A pure-Python wheel holding one module that says where it was imported from."""
    import zipfile
    module = name.replace("-", "_")
    info = f"{module}-{version}.dist-info"
    files = {f"{module}/__init__.py": f"__version__ = {version!r}\n",
             f"{info}/METADATA": "Metadata-Version: 2.1\n" f"Name: {name}\nVersion: {version}\n"
                                 + "".join(f"Requires-Dist: {r}\n" for r in requires),
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                              "Tag: py3-none-any\n"}
    files[f"{info}/RECORD"] = "".join(f"{p},,\n" for p in files) + f"{info}/RECORD,,\n"
    path = folder / f"{module}-{version}-py3-none-any.whl"
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        for p, text in files.items():
            z.writestr(p, text)
    return path


def _carried_wheels(folder: Path, keras_requires=("namex", "optree", "numpy")) -> Path:
    from pipeline.records import gpu_wheels
    for spec in gpu_wheels.carried():
        name, version = spec.split("==")
        _wheel(folder, name, version, keras_requires if name == "keras" else ())
    return folder


def _installed_as_wheels(folder: Path) -> Path:
    """The carried packages as this checkout has them installed (the pinned releases, built for
    this Python), packed again as wheels: a dry run's snippets import the real Keras and optree
    from the wheels, as on the lent machine (a stand-in optree would break torch's import)."""
    import importlib.metadata as md
    import zipfile
    from pipeline.records import gpu_wheels
    folder.mkdir(parents=True, exist_ok=True)
    for spec in gpu_wheels.carried():
        name, version = spec.split("==")
        dist = md.distribution(name)
        assert dist.version == version, f"this checkout's {name} is not the pinned {version}"
        tag = next(line.split(": ", 1)[1] for line in dist.read_text("WHEEL").splitlines()
                   if line.startswith("Tag: "))
        files = [f for f in dist.files if not f.parts[0] == ".." and "__pycache__" not in f.parts
                 and f.name not in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")]
        info = next(f.parts[0] for f in files if f.parts[0].endswith(".dist-info"))
        path = folder / f"{name.replace('-', '_')}-{version}-{tag}.whl"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            for f in files:
                z.write(dist.locate_file(f), f.as_posix())
            z.writestr(f"{info}/RECORD",
                       "".join(f"{f.as_posix()},,\n" for f in files) + f"{info}/RECORD,,\n")
    return folder


def test_the_budget_plan_holds_every_snippet_that_needs_a_gpu():
    from pipeline.records.gpu_run import BUDGET_PLAN, BUDGET_WEIGHTS
    from pipeline.running.snippets import discover
    found = {s.rel: s for s in discover(REPO / "snippets")}
    assert [rel for rel in BUDGET_PLAN if rel not in found] == []
    assert len(set(BUDGET_PLAN)) == len(BUDGET_PLAN)
    needs_gpu = {rel for rel, s in found.items() if s.needs_gpu and not s.matrix}
    assert needs_gpu - set(BUDGET_PLAN) == set(), "a GPU snippet the lent machine's run skips"
    assert set(BUDGET_WEIGHTS) <= set(BUDGET_PLAN)


def test_the_carried_wheels_are_the_pins_and_cover_what_the_pinned_keras_needs():
    """Fails when Keras gains a requirement that is neither carried nor on the machine."""
    import importlib.metadata as md
    from pipeline.records import gpu_wheels
    pins = gpu_wheels.pins()
    assert gpu_wheels.carried() == [f"{n}=={pins[n]}" for n in gpu_wheels.CARRIED]
    keras = md.distribution("keras")
    assert keras.version == pins["keras"], "this checkout's Keras is not the pinned one"
    needs = set(gpu_wheels.requirements_of(keras))
    assert needs - set(gpu_wheels.CARRIED) - set(gpu_wheels.ON_THE_MACHINE) == set()
    assert "keras" not in needs and {"namex", "optree"} <= needs


def test_installing_the_wheels_checks_them_and_what_keras_needs(tmp_path):
    from pipeline.records import gpu_wheels
    good = _carried_wheels(tmp_path / "good")
    lines = []
    gpu_wheels.install(good, tmp_path / "site", log=lines.append)
    assert (tmp_path / "site" / "keras" / "__init__.py").is_file()
    assert lines[0].startswith("wheels: Keras ") and "namex" in lines[0] and "numpy" in lines[0]
    bad = _carried_wheels(tmp_path / "bad", keras_requires=("namex", "not-on-any-machine"))
    with pytest.raises(gpu_wheels.WheelError, match="needs not-on-any-machine"):
        gpu_wheels.install(bad, tmp_path / "site2")
    (good / next(p.name for p in good.iterdir() if p.name.startswith("namex"))).unlink()
    with pytest.raises(gpu_wheels.WheelError, match="wants one wheel of namex=="):
        gpu_wheels.install(good, tmp_path / "site3")
    with pytest.raises(gpu_wheels.WheelError, match="no such folder"):
        gpu_wheels.install(tmp_path / "none", tmp_path / "site4")


def test_a_budgeted_run_keeps_its_budget_and_leaves_an_archive_add_records_takes(
        gpu_box, tmp_path):
    """--wheels, --budget and --archive together, on a pretend GPU machine: the GPU tests
    alone, then the shared snippet, then the others alone in the order asked; a benchmark is
    told its deadline; one is stopped at the end of the budget, the next is not started."""
    root = _project(tmp_path / "project")
    snippets = root / "snippets" / "t"
    (snippets / "b1.py").write_text(
        "# snippet: exclusive\nimport os, time, keras\n"
        "print('keras from', 'wheels' if 'gpu-wheels-' in keras.__file__ else keras.__file__)\n"
        "print('deadline in', round(float(os.environ['BENCH_DEADLINE']) - time.time()))\n")
    (snippets / "b2.py").write_text("# snippet: exclusive timeout=300\nimport time\n"
                                    "time.sleep(200)\n")
    (snippets / "b3.py").write_text("# snippet: exclusive\nprint('never')\n")
    wheels = _carried_wheels(tmp_path / "wheels")
    archive = tmp_path / "out" / "records.tar.gz"
    scratch = tmp_path / "scratch"  # the run's temporary folders (TMPDIR)
    scratch.mkdir()
    # 60 s: the GPU tests' slot (21 s) may run out under a loaded CI machine (a 30-s budget
    # once left its end too few seconds to start the snippets) and still leave b2 its start.
    started = time.monotonic()
    proc = gpu_run(root, {**gpu_box, "TMPDIR": str(scratch)}, "--budget", "60", "--wheels",
                   str(wheels), "--archive", str(archive),
                   "--only", "t/ok.py", "t/b1.py", "t/b2.py", "t/b3.py", timeout=120)
    took = time.monotonic() - started
    # The packages it installed from the wheels, and their cache, went with the run.
    assert not list(scratch.glob("gpu-wheels-*")), sorted(scratch.iterdir())
    assert proc.returncode == 1, proc.stdout + proc.stderr  # b2 stopped, a GPU test failed
    assert took < 60 + 25, took  # the budget, and the archive's check after it
    out = proc.stdout
    assert out.index("t/ok.py") < out.index("alone from now on") < out.index("t/b1.py") \
        < out.index("t/b2.py")  # alone: in the order of --only, benchmarks after the shared
    (m,) = records.load_all(root / "results", root / "snippets")
    b1 = next(r for r in m.records if r.snippet == "t/b1.py")
    assert b1.data["stdout"].startswith("keras from wheels\ndeadline in ")
    assert 0 < int(b1.data["stdout"].split()[-1]) <= 60
    run = m.data["run"]
    assert run["budget_seconds"] == 60 and run["not_run"] == {
        "t/b3.py": "not run: the run's time budget was spent"}
    assert "at the end of the run's time budget" in run["failed"]["t/b2.py"]
    assert run["gpu_tests"]["passed"] == 1
    assert "not run, the time budget was spent (1): t/b3.py" in out
    assert f"archive: {archive}" in out and archive.is_file()
    from pipeline.records import add_records
    lines = add_records.add(archive, root, results=tmp_path / "check")
    assert lines[0].startswith("added to ") and "t/b1.py" in "\n".join(lines)


def test_the_lent_machines_command_as_a_dry_run_on_this_cpu(tmp_path):
    """The command CONTRIBUTING gives for a lent GPU machine, with --dry-run: the wheels are
    installed and checked, the budgeted run records the dry-run snippets, and the archive
    passes add_records' checks (as a dry run's)."""
    if device.has_gpu():
        pytest.skip("a dry run is for a machine without a GPU")
    wheels = _installed_as_wheels(tmp_path / "wheels")
    archive = tmp_path / "out" / "records.tar.gz"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    logs = tmp_path / "out" / "logs"
    proc = subprocess.run([sys.executable, "-m", "pipeline.gpu_run", "--dry-run", "--budget",
                           "240", "--wheels", str(wheels), "--logs", str(logs), "--archive",
                           str(archive), "--results", str(tmp_path / "results")], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("wheels: Keras ")
    # With the carried packages, nothing comes from this checkout's cache: the snippets ran.
    assert f"snippets: {len(gpu_run_module.DRY_RUN_SNIPPETS)} to run, 0 from the cache" \
        in proc.stdout
    assert "DRY RUN (--dry-run)" in proc.stdout and archive.is_file()
    (m,) = records.load_all(tmp_path / "results", REPO / "snippets")
    assert m.data["run"]["dry_run"] is True and m.data["run"]["budget_seconds"] == 240
    assert sorted(r.snippet for r in m.records) == sorted(gpu_run_module.DRY_RUN_SNIPPETS)
    # each program's output comes back beside the archive, and inside it as MACHINE/logs/
    kept = sorted(p.relative_to(logs).as_posix() for p in logs.rglob("*.log"))
    assert kept == sorted(f"{rel}.log" for rel in gpu_run_module.DRY_RUN_SNIPPETS), kept
    import tarfile
    with tarfile.open(archive) as tar:
        packed = {n.split("/", 1)[1] for n in tar.getnames() if "/logs/" in n and n.endswith(".log")}
    assert {f"logs/{k}" for k in kept} <= packed, packed


def test_a_budgeted_run_walks_the_gpu_order_within_its_budget(gpu_box, tmp_path, monkeypatch):
    """The rehearsal of a lent GPU's run, on this CPU with a pretend GPU: the plan's first
    benchmarks alone, each told its share of the budget less the tests' slot and stopped soon
    after it (its data and output kept in the logs); then the GPU tests alone; then the shared
    snippet; then the rest alone. A second run leaves out what has a current record."""
    from pipeline.records.gpu_run import record_run, pack
    from pipeline.records import add_records
    from pipeline.running import runner
    monkeypatch.setattr(runner, "SHARE_GRACE", 2)  # 60 s on a GPU: the stop is what is tested
    root = _project(tmp_path / "project")
    snippets = root / "snippets" / "t"
    (snippets / "lead1.py").write_text(  # overruns its share: stopped, its data kept
        "# snippet: exclusive timeout=300\nimport os, pathlib, time\n"
        "pathlib.Path(os.environ['SNIPPET_DATA_DIR'], 'size1.json').write_text('{}')\n"
        "print('measured the first size', flush=True)\ntime.sleep(200)\n")
    (snippets / "lead2.py").write_text(
        "# snippet: exclusive\nimport os, time\n"
        "print('share', round(float(os.environ['BENCH_DEADLINE']) - time.time()))\n")
    (snippets / "b1.py").write_text("# snippet: exclusive\nprint('after the shared')\n")
    only = ["t/lead1.py", "t/lead2.py", "t/ok.py", "t/b1.py"]
    lines, logs, budget = [], tmp_path / "logs", 90  # the provenance comes out of it too
    started = time.monotonic()
    status, state = record_run(runner.Project(root), root / "results", only=only, jobs=2,
                               log=lines.append, budget=budget, logs=logs)
    took = time.monotonic() - started
    text = "\n".join(lines)
    order = ["running t/lead1.py", "running t/lead2.py", "GPU tests (pytest -m gpu) alone",
             "running t/ok.py", "alone from now on", "running t/b1.py"]
    where = [text.find(mark) for mark in order]
    assert -1 not in where and where == sorted(where), (where, text)
    assert took < budget + 10, took
    run = state["run"]
    slot = gpu_run_module.TESTS_SHARE * budget
    # lead1's share: the budget less the tests' slot, over the three measuring snippets
    stopped = float(re.search(r"stopped after (\d+) s", run["failed"]["t/lead1.py"]).group(1))
    assert stopped <= (budget - slot) / 3 + 2 + 1, run["failed"]
    assert (logs / "t" / "lead1.py.data" / "size1.json").is_file()
    assert "measured the first size" in (logs / "t" / "lead1.py.log").read_text()
    share = int(next(r for r in records.load_all(root / "results", root / "snippets")[0].records
                     if r.snippet == "t/lead2.py").data["stdout"].split()[-1])
    assert 0 < share <= (budget - slot - stopped) / 2 + 1, share
    assert run["gpu_tests"]["passed"] == 1 and "1 passed" in (logs / "gpu-tests.log").read_text()
    assert sorted(run["recorded"]) == ["t/b1.py", "t/lead2.py", "t/ok.py"]
    # the archive carries the logs; add_records reads past them and says where they are
    archive = tmp_path / "records.tar.gz"
    pack(runner.Project(root), root / "results", state["slug"], archive, False, logs)
    added = add_records.add(archive, root, results=tmp_path / "check")
    assert any("the run's logs" in line and "test-card/logs" in line for line in added), added
    assert not (tmp_path / "check" / "test-card" / "logs").exists()
    # again: what has a current record for this machine is left out, and kept as recorded
    lines.clear()
    status, state = record_run(runner.Project(root), root / "results", jobs=2, log=lines.append,
                               only=["t/ok.py", "t/lead2.py"], budget=budget, tests=False)
    assert "2 snippet(s) with a current record for this machine are left out" in lines[0], lines
    assert not any("running t/" in line for line in lines), lines
    assert {"t/ok.py", "t/lead2.py"} <= set(state["run"]["recorded"])
