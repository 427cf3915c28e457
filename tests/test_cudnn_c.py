"""snippets/c: the programs build with -Werror against the pip wheels, through the runner as the
site builds them; the version program's claims hold; the GPU programs say "needs a GPU" on a
CPU and match their references on a GPU; the CPU references agree with PyTorch."""
from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO

C_DIR = REPO / "snippets" / "c"
PROGRAMS = ["version", "conv_v7", "lstm_v8", "conv_graph"]
GPU_PROGRAMS = ["conv_v7", "lstm_v8", "conv_graph"]


def _wheel(name: str) -> Path:
    mod = __import__(f"nvidia.{name}", fromlist=["_"])
    return Path(list(mod.__path__)[0])


def _has_gpu() -> bool:
    from pipeline import device
    return device.has_gpu()


def _plain_env() -> dict:
    """As when mkdocs is started as .venv/bin/mkdocs: no activated virtualenv on PATH."""
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = "/usr/bin:/bin"
    return env


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """Every program, built by the Makefile with `make -B` into a fresh folder."""
    out = tmp_path_factory.mktemp("cbuild")
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = f"{Path(sys.executable).parent}:/usr/bin:/bin"
    r = subprocess.run(["make", "-B", "-s", "-C", str(C_DIR), f"BUILD_DIR={out}"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return out


def run(binary: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=120)


def test_makefile_uses_the_strict_flags_and_versioned_libraries():
    r = subprocess.run(["make", "-n", "-B", "-C", str(C_DIR), "BUILD_DIR=/tmp/x", "/tmp/x/version",
                        f"PYTHON={sys.executable}"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    cmd = r.stdout
    for flag in ("-std=c11", "-Wall", "-Wextra", "-Werror", "-l:libcudnn.so.9",
                 "-l:libcudart.so.12", "-Wl,-rpath,", "--disable-new-dtags"):
        assert flag in cmd, (flag, cmd)
    assert "nvcc " not in cmd and " -lcudnn " not in cmd


# --- how the Makefile finds cuDNN and the CUDA runtime: fake install trees -----------------------

def _touch(root: Path, *rels: str) -> Path:
    for rel in rels:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    return root


def _python_with(tmp_path: Path, site: Path | None) -> Path:
    """A Python that sees only `site` (no site-packages of its own), as a fresh machine's would."""
    wrapper = tmp_path / "python"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={site or ''} exec {sys.executable} -S \"$@\"\n")
    wrapper.chmod(0o755)
    return wrapper


def _where(python: Path, tmp_path: Path, **variables: str) -> dict:
    """`make -s where` with nothing of this machine's own installs in the way."""
    defaults = {"CUDA_HOME": str(tmp_path / "no-cuda"), "SYSTEM_INCLUDE": str(tmp_path / "none"),
                "SYSTEM_LIB": str(tmp_path / "none"), **variables}
    r = subprocess.run(["make", "-s", "-C", str(C_DIR), "where", f"PYTHON={python}",
                        *(f"{k}={v}" for k, v in defaults.items())],
                       capture_output=True, text=True, timeout=60, env=_plain_env())
    assert r.returncode == 0, r.stderr
    return dict(line.split("=", 1) for line in r.stdout.splitlines())


CU12_WHEELS = ("nvidia/cudnn/include/cudnn.h", "nvidia/cudnn/lib/libcudnn.so.9",
               "nvidia/cuda_runtime/include/cuda_runtime.h",
               "nvidia/cuda_runtime/lib/libcudart.so.12",
               "nvidia/cuda_nvcc/include/crt/host_defines.h")
CU13_WHEELS = ("nvidia/cudnn/include/cudnn.h", "nvidia/cudnn/lib/libcudnn.so.9",
               "nvidia/cu13/include/cuda_runtime.h", "nvidia/cu13/include/crt/host_defines.h",
               "nvidia/cu13/lib/libcudart.so.13")
SYSTEM_CUDA = ("include/cuda_runtime.h", "include/crt/host_defines.h", "lib64/libcudart.so.12")


def test_makefile_finds_the_cuda_12_wheels_of_the_python_it_is_given(tmp_path):
    site = _touch(tmp_path / "site", *CU12_WHEELS)
    found = _where(_python_with(tmp_path, site), tmp_path)
    n = site / "nvidia"
    assert found["CUDNN_INC"] == f"{n}/cudnn/include" and found["CUDNN_LIB"] == f"{n}/cudnn/lib"
    assert found["CUDART"] == f"{n}/cuda_runtime" and found["CUDART_SO"] == "libcudart.so.12"
    assert found["CRT_INC"] == f"{n}/cuda_nvcc/include"


def test_makefile_finds_the_cuda_13_wheels_and_their_other_soname(tmp_path):
    site = _touch(tmp_path / "site", *CU13_WHEELS)
    found = _where(_python_with(tmp_path, site), tmp_path)
    n = site / "nvidia"
    assert found["CUDNN_LIB"] == f"{n}/cudnn/lib"
    assert found["CUDART"] == f"{n}/cu13" and found["CUDART_SO"] == "libcudart.so.13"
    assert found["CRT_INC"] == f"{n}/cu13/include"


def test_makefile_takes_cuda_12s_runtime_when_both_runtime_wheels_are_there(tmp_path):
    # requirements.txt pins CUDA 12's runtime for these programs; PyTorch's wheel adds CUDA 13's.
    site = _touch(tmp_path / "site", *CU12_WHEELS, *CU13_WHEELS[2:])
    found = _where(_python_with(tmp_path, site), tmp_path)
    n = site / "nvidia"
    assert found["CUDART"] == f"{n}/cuda_runtime" and found["CUDART_SO"] == "libcudart.so.12"
    assert found["CRT_INC"] == f"{n}/cuda_nvcc/include"


def test_makefile_finds_a_system_toolkit_and_nvidias_debian_cudnn(tmp_path):
    cuda = _touch(tmp_path / "cuda", *SYSTEM_CUDA)
    usr = _touch(tmp_path / "usr", "include/cudnn.h", "lib/x86_64-linux-gnu/libcudnn.so.9")
    found = _where(_python_with(tmp_path, None), tmp_path, CUDA_HOME=str(cuda),
                   SYSTEM_INCLUDE=f"{usr}/include/x86_64-linux-gnu {usr}/include",
                   SYSTEM_LIB=f"{usr}/lib/x86_64-linux-gnu {usr}/lib")
    assert found["CUDNN_INC"] == f"{usr}/include"
    assert found["CUDNN_LIB"] == f"{usr}/lib/x86_64-linux-gnu"
    assert found["CUDART"] == str(cuda) and found["CUDART_LIB"] == f"{cuda}/lib64"
    assert found["CUDART_SO"] == "libcudart.so.12" and found["CRT_INC"] == f"{cuda}/include"
    # cuDNN's tarball in CUDNN_HOME comes before the system folders.
    tarball = _touch(tmp_path / "cudnn", "include/cudnn.h", "lib/libcudnn.so.9")
    found = _where(_python_with(tmp_path, None), tmp_path, CUDA_HOME=str(cuda),
                   CUDNN_HOME=str(tarball), SYSTEM_INCLUDE=f"{usr}/include")
    assert (found["CUDNN_INC"], found["CUDNN_LIB"]) == (f"{tarball}/include", f"{tarball}/lib")


def test_makefile_prefers_the_wheels_and_takes_the_toolkits_runtime_when_no_wheel_has_one(
        tmp_path):
    cuda = _touch(tmp_path / "cuda", *SYSTEM_CUDA)
    both = _touch(tmp_path / "both", *CU12_WHEELS)
    found = _where(_python_with(tmp_path, both), tmp_path, CUDA_HOME=str(cuda))
    assert found["CUDART"] == f"{both}/nvidia/cuda_runtime"  # the runtime that goes with the wheel
    only_cudnn = _touch(tmp_path / "only", *CU12_WHEELS[:2])
    found = _where(_python_with(tmp_path, only_cudnn), tmp_path, CUDA_HOME=str(cuda))
    assert found["CUDNN_LIB"] == f"{only_cudnn}/nvidia/cudnn/lib" and found["CUDART"] == str(cuda)


@pytest.mark.parametrize("have, says", [((), "no cuDNN found"),
                                        (CU12_WHEELS[:2], "no CUDA runtime found")])
def test_makefile_without_cudnn_or_runtime_fails_with_one_clear_message(tmp_path, have, says):
    site = _touch(tmp_path / "site", *have)
    r = subprocess.run(["make", "-s", "-C", str(C_DIR), f"BUILD_DIR={tmp_path}/b",
                        f"{tmp_path}/b/version", f"PYTHON={_python_with(tmp_path, site)}",
                        f"CUDA_HOME={tmp_path}/no-cuda", f"SYSTEM_INCLUDE={tmp_path}/none",
                        f"SYSTEM_LIB={tmp_path}/none"],
                       capture_output=True, text=True, timeout=60, env=_plain_env())
    assert r.returncode != 0 and r.stderr.startswith(says), r.stderr
    assert not (tmp_path / "b" / "version").exists()


def test_makefile_builds_a_working_program_from_a_system_layout(tmp_path):
    """The system branch for real: this machine's wheels rearranged as a toolkit in CUDA_HOME
    (lib64/) and a cuDNN tarball in CUDNN_HOME; the program builds with -Werror and runs."""
    cudnn, cudart, nvcc = _wheel("cudnn"), _wheel("cuda_runtime"), _wheel("cuda_nvcc")
    cuda, tarball = tmp_path / "cuda", tmp_path / "cudnn"
    (cuda / "lib64").mkdir(parents=True)
    (cuda / "include").mkdir()
    for header in (cudart / "include").iterdir():
        (cuda / "include" / header.name).symlink_to(header)
    (cuda / "include" / "crt").symlink_to(nvcc / "include" / "crt")
    for lib in (cudart / "lib").glob("libcudart.so*"):
        (cuda / "lib64" / lib.name).symlink_to(lib)
    tarball.mkdir()
    (tarball / "include").symlink_to(cudnn / "include")
    (tarball / "lib").symlink_to(cudnn / "lib")
    python = _python_with(tmp_path, None)
    r = subprocess.run(["make", "-s", "-C", str(C_DIR), f"BUILD_DIR={tmp_path}/b",
                        f"{tmp_path}/b/version", f"PYTHON={python}", f"CUDA_HOME={cuda}",
                        f"CUDNN_HOME={tarball}", f"SYSTEM_INCLUDE={tmp_path}/none",
                        f"SYSTEM_LIB={tmp_path}/none"],
                       capture_output=True, text=True, timeout=120, env=_plain_env())
    assert r.returncode == 0, r.stderr
    out = run(tmp_path / "b" / "version")
    assert out.returncode == 0 and "cudnnCreate:" in out.stdout, out.stderr
    assert f"cuDNN   header {md.version('nvidia-cudnn-cu12').rsplit('.', 1)[0]}" in out.stdout


@pytest.mark.skipif(_has_gpu(), reason="pins the device to CPU; the gpu tests cover a GPU machine")
def test_runner_builds_and_classifies_every_program_without_an_activated_venv(
        tmp_path, monkeypatch, cpu_only):
    """The site's own path: runner -> make -> binary, with PATH lacking the virtualenv."""
    from pipeline import runner
    for k in list(os.environ):
        if k == "VIRTUAL_ENV":
            monkeypatch.delenv(k)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    project = runner.Project(REPO, cache=tmp_path / "cache")
    outcomes = {o.snippet.rel: o for o in runner.run_all(
        project, only=[f"c/{p}.c" for p in PROGRAMS])}
    assert outcomes["c/version.c"].status == "ok", outcomes["c/version.c"].stderr
    assert "cudnnCreate:" in outcomes["c/version.c"].stdout
    for p in GPU_PROGRAMS:
        o = outcomes[f"c/{p}.c"]
        assert (o.status, o.returncode) == ("needs-gpu", 77), (p, o.problem, o.stderr)
        assert o.stdout.startswith("needs a GPU: no CUDA device"), o.stdout


def test_version_program_reports_the_installed_wheel(built):
    r = run(built / "version")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    wheel = md.version("nvidia-cudnn-cu12")  # e.g. 9.28.0.42
    major, minor, patch = (int(v) for v in wheel.split(".")[:3])
    number = major * 10000 + minor * 100 + patch  # the cuDNN 9 encoding the page states
    assert f"cuDNN   header {major}.{minor}.{patch} (CUDNN_VERSION {number}), library {number}" in out
    assert f"library properties {major}.{minor}.{patch}" in out
    if _has_gpu():
        assert "cudnnCreate: CUDNN_STATUS_SUCCESS" in out
    else:
        # What the page and the troubleshooting page say happens without a GPU.
        assert "cudnnCreate: CUDNN_STATUS_NOT_INITIALIZED (1001)" in out
        assert "cudnnGetLastErrorString: cudaGetDeviceCount(&count) != cudaSuccess" in out
        assert ", driver 0" in out  # no NVIDIA driver on a CPU machine


@pytest.mark.skipif(_has_gpu(), reason="checks the behaviour without a GPU")
@pytest.mark.parametrize("program", GPU_PROGRAMS)
def test_gpu_programs_print_one_line_and_exit_77_without_a_gpu(built, program):
    r = run(built / program)
    assert r.returncode == 77, (r.stdout, r.stderr)
    lines = r.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("needs a GPU: no CUDA device"), r.stdout


def test_plain_lcudnn_fails_with_the_wheels(tmp_path):
    cudnn, cudart, nvcc = _wheel("cudnn"), _wheel("cuda_runtime"), _wheel("cuda_nvcc")
    assert not (cudnn / "lib" / "libcudnn.so").exists()
    assert (cudnn / "lib" / "libcudnn.so.9").exists()
    r = subprocess.run(
        ["gcc", "-std=c11", str(C_DIR / "version.c"), "-o", str(tmp_path / "v"),
         f"-I{cudnn}/include", f"-I{cudart}/include", f"-I{nvcc}/include",
         f"-L{cudnn}/lib", f"-L{cudart}/lib", "-lcudnn", "-l:libcudart.so.12"],
        capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "cannot find -lcudnn" in r.stderr, r.stderr


def test_build_by_hand_script_builds_a_working_program(tmp_path):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:/usr/bin:/bin")
    r = subprocess.run(["sh", str(C_DIR / "build-by-hand.sh"), str(tmp_path)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = run(tmp_path / "version")
    assert out.returncode == 0 and "cudnnCreate:" in out.stdout


def _headers() -> str:
    inc = _wheel("cudnn") / "include"
    return "\n".join(p.read_text(errors="replace") for p in sorted(inc.glob("cudnn*.h")))


def test_seed_api_is_gone_and_its_replacements_exist():
    text = _headers()
    assert not re.search(r"\bcudnnGetConvolutionForwardAlgorithm\s*\(", text)
    assert "CUDNN_CONVOLUTION_FWD_PREFER_FASTEST" not in text
    for name in ("cudnnGetConvolutionForwardAlgorithm_v7", "cudnnFindConvolutionForwardAlgorithm",
                 "cudnnSetRNNDescriptor_v8", "cudnnRNNForward", "cudnnGetRNNWeightParams",
                 "cudnnGetRNNTempSpaceSizes", "cudnnGetLastErrorString"):
        assert re.search(rf"\b{name}\s*\(", text), name
    for removed in ("cudnnRNNForwardInference", "cudnnRNNForwardTraining",
                    "cudnnSetRNNDescriptor_v6", "cudnnGetRNNWorkspaceSize"):
        assert not re.search(rf"\b{removed}\b", text), removed


def test_seed_call_does_not_compile(tmp_path):
    src = tmp_path / "seed.c"
    src.write_text(
        '#include <cudnn.h>\n'
        'int main(void) {\n'
        '    cudnnHandle_t h = 0; cudnnTensorDescriptor_t x = 0; cudnnFilterDescriptor_t w = 0;\n'
        '    cudnnConvolutionDescriptor_t c = 0; cudnnConvolutionFwdAlgo_t algo;\n'
        '    cudnnGetConvolutionForwardAlgorithm(h, x, w, c, x,\n'
        '        CUDNN_CONVOLUTION_FWD_PREFER_FASTEST, 0, &algo);\n'
        '    return 0;\n}\n')
    cudnn, cudart, nvcc = _wheel("cudnn"), _wheel("cuda_runtime"), _wheel("cuda_nvcc")
    r = subprocess.run(["gcc", "-std=c11", "-c", str(src), "-o", str(tmp_path / "seed.o"),
                        f"-I{cudnn}/include", f"-I{cudart}/include", f"-I{nvcc}/include"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert "CUDNN_CONVOLUTION_FWD_PREFER_FASTEST" in r.stderr and "undeclared" in r.stderr


def test_deprecation_warnings_appear_only_when_asked_for(tmp_path):
    cudnn, cudart, nvcc = _wheel("cudnn"), _wheel("cuda_runtime"), _wheel("cuda_nvcc")
    base = ["gcc", "-std=c11", "-Wall", "-Wextra", "-c", str(C_DIR / "conv_v7.c"),
            "-o", str(tmp_path / "c.o"), f"-I{cudnn}/include", f"-I{cudart}/include",
            f"-I{nvcc}/include"]
    env = dict(os.environ, LC_ALL="C")  # plain quotes in gcc's messages
    quiet = subprocess.run(base, capture_output=True, text=True, timeout=120, env=env)
    loud = subprocess.run(base + ["-DCUDNN_WARN_DEPRECATED"], capture_output=True, text=True,
                          timeout=120, env=env)
    assert quiet.returncode == 0 and "deprecated" not in quiet.stderr
    assert loud.returncode == 0
    assert re.search(r"'cudnnConvolutionForward' is deprecated", loud.stderr), loud.stderr[-2000:]


def _function(src: str, name: str) -> str:
    m = re.search(rf"^static \w+ {name}\(.*?^}}", src, flags=re.S | re.M)
    assert m, name
    return m.group(0)


def test_conv_cpu_reference_matches_torch(built):
    import torch
    r = run(built / "conv_v7", "--cpu-reference")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    n, c, h, w, k, rr, ss, pad, stride = d["shape"]
    x = torch.tensor(d["x"], dtype=torch.float64).reshape(n, c, h, w)
    f = torch.tensor(d["w"], dtype=torch.float64).reshape(k, c, rr, ss)
    y = torch.nn.functional.conv2d(x, f, padding=pad, stride=stride)
    got = torch.tensor(d["y"], dtype=torch.float64).reshape(y.shape)
    assert float((got - y).abs().max()) < 1e-6
    assert float(y.abs().max()) > 1.0  # not a trivial all-zero case
    # conv_graph.c checks against the same data and reference.
    v7, graph = (C_DIR / "conv_v7.c").read_text(), (C_DIR / "conv_graph.c").read_text()
    for fn in ("value", "conv_reference"):
        assert _function(v7, fn) == _function(graph, fn), fn


def _torch_lstm(d: dict, gate_order=(0, 1, 2, 3)):
    import torch
    T, B, IN, H = d["T"], d["B"], d["IN"], d["H"]
    W = np.array(d["W"]).reshape(4, H, IN)[list(gate_order)]
    R = np.array(d["R"]).reshape(4, H, H)[list(gate_order)]
    bW = np.array(d["bW"]).reshape(4, H)[list(gate_order)]
    bR = np.array(d["bR"]).reshape(4, H)[list(gate_order)]
    lstm = torch.nn.LSTM(IN, H).double()
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.from_numpy(W.reshape(4 * H, IN)))
        lstm.weight_hh_l0.copy_(torch.from_numpy(R.reshape(4 * H, H)))
        lstm.bias_ih_l0.copy_(torch.from_numpy(bW.reshape(-1)))
        lstm.bias_hh_l0.copy_(torch.from_numpy(bR.reshape(-1)))
        x = torch.tensor(d["x"], dtype=torch.float64).reshape(T, B, IN)
        h0 = torch.tensor(d["h0"], dtype=torch.float64).reshape(1, B, H)
        c0 = torch.tensor(d["c0"], dtype=torch.float64).reshape(1, B, H)
        y, (h, c) = lstm(x, (h0, c0))
    return y.numpy().reshape(-1), h.numpy().reshape(-1), c.numpy().reshape(-1)


def test_lstm_cpu_reference_matches_torch_and_catches_a_wrong_gate_order(built):
    r = run(built / "lstm_v8", "--cpu-reference")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    ref = [np.array(d[k]) for k in ("y", "hT", "cT")]
    for got, want in zip(ref, _torch_lstm(d)):
        assert np.abs(got - want).max() < 1e-5
    # The GPU check's tolerance (2e-3) is far below what a layout error produces.
    assert "const float tol = 2e-3f;" in (C_DIR / "lstm_v8.c").read_text()
    swapped = _torch_lstm(d, gate_order=(0, 2, 1, 3))  # forget and cell gates exchanged
    assert max(np.abs(a - b).max() for a, b in zip(ref, swapped)) > 0.05


@pytest.mark.gpu
@pytest.mark.parametrize("program", GPU_PROGRAMS)
def test_gpu_program_matches_its_reference_on_a_gpu(built, program):
    if not _has_gpu():
        pytest.skip("needs a GPU")
    r = run(built / program)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "OK: cuDNN matches the CPU reference" in r.stdout, r.stdout
    assert "MISMATCH" not in r.stderr


@pytest.mark.gpu
def test_version_program_creates_a_handle_on_a_gpu(built):
    if not _has_gpu():
        pytest.skip("needs a GPU")
    r = run(built / "version")
    assert r.returncode == 0 and "cudnnCreate: CUDNN_STATUS_SUCCESS" in r.stdout, r.stdout


def test_pages_embed_the_same_programs_in_both_languages():
    refs = re.compile(r'--8<-- "([^"]+)"|<!-- output: (\S+) -->')
    en = refs.findall((REPO / "docs" / "cudnn-c.md").read_text())
    es = refs.findall((REPO / "docs" / "cudnn-c.es.md").read_text())
    assert en == es and len(en) >= 9
    shown = {a or b for a, b in en}
    for p in PROGRAMS:
        assert f"c/{p}.c" in shown or f"c/{p}.c:show" in shown, p
