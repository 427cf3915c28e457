"""`make gpu-run` (pipeline/gpu_run.py) on a pretend GPU machine: a fake nvidia-smi and nvcc on
PATH, tiny snippets and tests in a throw-away project. What is checked is the run's behaviour
(records, skips, failures, the summary, an interruption), never a GPU figure."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import REPO
from pipeline import machine, records

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
    from pipeline import device
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
    assert "tensorflow_built_with_cudnn" in p  # asked of TensorFlow itself, in a child process
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
    """Whether the snippet runs: as its program (pipeline/program.py), `python NAME.py` in a work
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
