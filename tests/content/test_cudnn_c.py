"""snippets/c: the programs build with -Werror against the pip wheels, through the runner as the
site builds them; the version program's claims hold; the GPU programs say "needs a GPU" on a
CPU and match their references on a GPU; the CPU references agree with PyTorch (the training
program's gradients with its autograd, and planted mistakes are caught). The C page gives each
program's files and build commands in one place, and what the copy button copies builds them in
an empty folder; its table of removed RNN calls holds against cuDNN 8's and the installed
cuDNN 9's headers; the compiler messages it quotes are what gcc, g++ and ld print."""
from __future__ import annotations

import functools
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
PROGRAMS = ["version", "conv_v7", "lstm_v8", "lstm_train", "gru_v8", "conv_graph"]
GPU_PROGRAMS = ["conv_v7", "lstm_v8", "lstm_train", "gru_v8", "conv_graph"]
# The programs the page gives whole, with cudnn_check.h and the commands that build them.
BUILT_FROM_THE_PAGE = ["version", "lstm_v8", "lstm_train", "gru_v8"]


def _wheel(name: str) -> Path:
    mod = __import__(f"nvidia.{name}", fromlist=["_"])
    return Path(list(mod.__path__)[0])


def _has_gpu() -> bool:
    from pipeline.running import device
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
    from pipeline.running import runner
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
    shown = {(a or b).partition(":")[0] for a, b in en}
    for p in PROGRAMS:
        assert f"c/{p}.c" in shown, p
    # The programs a reader builds from the page are embedded whole (their `file` section).
    for p in BUILT_FROM_THE_PAGE:
        assert (f"c/{p}.c:file", "") in en and (f"c/build_{p}.sh", "") in en, p


# --- the training program: its CPU reference against PyTorch's autograd --------------------------

TRAIN_RESULTS = ("y", "hT", "cT", "dx", "dh0", "dc0", "dW", "dR", "dbW", "dbR")


def _torch_lstm_training(d: dict, gate_order=(0, 1, 2, 3)) -> dict:
    """The training program's results from PyTorch: the forward pass, then the gradients of
    L = sum(y * dy) + sum(hT * dhy) + sum(cT * dcy), by autograd, in float64. Weights are read
    in cuDNN's gate order; `gate_order` puts them in another (and the gradients back)."""
    import torch
    T, B, IN, H = d["T"], d["B"], d["IN"], d["H"]
    order = list(gate_order)
    t = lambda key, *shape: torch.tensor(d[key], dtype=torch.float64).reshape(*shape)  # noqa: E731
    lstm = torch.nn.LSTM(IN, H).double()
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(t("W", 4, H, IN)[order].reshape(4 * H, IN))
        lstm.weight_hh_l0.copy_(t("R", 4, H, H)[order].reshape(4 * H, H))
        lstm.bias_ih_l0.copy_(t("bW", 4, H)[order].reshape(-1))
        lstm.bias_hh_l0.copy_(t("bR", 4, H)[order].reshape(-1))
    x, h0, c0 = (t("x", T, B, IN).requires_grad_(), t("h0", 1, B, H).requires_grad_(),
                 t("c0", 1, B, H).requires_grad_())
    y, (h, c) = lstm(x, (h0, c0))
    loss = (y * t("dy", T, B, H)).sum() + (h * t("dhy", 1, B, H)).sum() + (c * t("dcy", 1, B, H)).sum()
    loss.backward()
    back = np.argsort(order)  # gradients in cuDNN's gate order again

    def grad(param, *shape):
        return param.grad.numpy().reshape(*shape)[back].reshape(-1)
    return {"y": y.detach().numpy().reshape(-1), "hT": h.detach().numpy().reshape(-1),
            "cT": c.detach().numpy().reshape(-1), "dx": x.grad.numpy().reshape(-1),
            "dh0": h0.grad.numpy().reshape(-1), "dc0": c0.grad.numpy().reshape(-1),
            "dW": grad(lstm.weight_ih_l0, 4, H, IN), "dR": grad(lstm.weight_hh_l0, 4, H, H),
            "dbW": grad(lstm.bias_ih_l0, 4, H), "dbR": grad(lstm.bias_hh_l0, 4, H)}


def _largest_difference(d: dict, want: dict) -> tuple[float, str]:
    return max((float(np.abs(np.array(d[k]) - want[k]).max()), k) for k in TRAIN_RESULTS)


def _gpu_tolerance(program: str) -> float:
    m = re.search(r"const float tol = ([\d.e-]+)f;", (C_DIR / f"{program}.c").read_text())
    assert m, program
    return float(m.group(1))


def test_training_reference_matches_torch_autograd_and_a_wrong_gate_order_does_not(built):
    r = run(built / "lstm_train", "--cpu-reference")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    diff, where = _largest_difference(d, _torch_lstm_training(d))
    assert diff < 1e-5, (where, diff)
    for k in TRAIN_RESULTS[3:]:  # no gradient is trivially zero
        assert np.abs(np.array(d[k])).max() > 0.1, k
    # Reading the gradient space in another gate order: far above the GPU check's tolerance,
    # and above what the page says (0.1) for the gradients alone.
    swapped = _torch_lstm_training(d, gate_order=(0, 2, 1, 3))
    grads = max(float(np.abs(np.array(d[k]) - swapped[k]).max()) for k in TRAIN_RESULTS[3:])
    assert grads > 0.1 > 100 * _gpu_tolerance("lstm_train")


# Plausible mistakes in a hand-written LSTM backward pass, planted in a copy of the program's
# reference: the comparison with autograd must catch each one, by far more than the GPU check's
# tolerance (the page says "more than a hundred times").
PLANTED = {
    "cell gradient not carried through the forget gate":
        ("dc[b][j] = dcj * f; /* through the forget gate, to the step before */",
         "dc[b][j] = dcj;"),
    "tanh derivative left out":
        ("float dcj = dc[b][j] + dhj * o * (1.0f - tc * tc);",
         "float dcj = dc[b][j] + dhj * o;"),
}


def _gcc_line(source: Path, out: Path) -> list[str]:
    cudnn, cudart, nvcc = _wheel("cudnn"), _wheel("cuda_runtime"), _wheel("cuda_nvcc")
    return ["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", str(source), "-o", str(out),
            f"-I{C_DIR}", f"-I{cudnn}/include", f"-I{cudart}/include", f"-I{nvcc}/include",
            f"-L{cudnn}/lib", f"-L{cudart}/lib", "-Wl,--disable-new-dtags",
            f"-Wl,-rpath,{cudnn}/lib:{cudart}/lib", "-l:libcudnn.so.9", "-l:libcudart.so.12", "-lm"]


@pytest.mark.parametrize("mistake", PLANTED)
def test_a_mistake_planted_in_the_training_reference_is_caught(tmp_path, mistake):
    right, wrong = PLANTED[mistake]
    source = (C_DIR / "lstm_train.c").read_text()
    assert source.count(right) == 1, f"the line to break is no longer in lstm_train.c: {right}"
    (tmp_path / "planted.c").write_text(source.replace(right, wrong))
    built = subprocess.run(_gcc_line(tmp_path / "planted.c", tmp_path / "planted"),
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    r = run(tmp_path / "planted", "--cpu-reference")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    diff, where = _largest_difference(d, _torch_lstm_training(d))
    assert diff > 100 * _gpu_tolerance("lstm_train"), (mistake, where, diff)


def test_training_program_sets_dropout_and_math_as_the_installed_pytorch_does():
    """The page says: an empty dropout descriptor and CUDNN_FMA_MATH (float32 without TF32), as
    PyTorch does. PyTorch's own cuDNN descriptors, in the installed wheel's headers, say so."""
    import torch
    descriptors = (Path(torch.__file__).parent / "include" / "ATen" / "cudnn" / "Descriptors.h")
    torch_src = " ".join(descriptors.read_text().split())
    assert ("cudnnSetDropoutDescriptor(mut_desc(), handle, 0 /* dropout */, nullptr, "
            "0 /* state_size */, 0 /* seed */)") in torch_src
    assert "} else if (!allow_tf32) { math_type = CUDNN_FMA_MATH; }" in torch_src
    program = " ".join((C_DIR / "lstm_train.c").read_text().split())
    assert "cudnnSetDropoutDescriptor(dropout, handle, 0.0f, NULL, 0, 0)" in program
    assert "CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH," in program


# --- the GRU program: its CPU reference against PyTorch's autograd and Keras's GRU ---------------

GRU_RESULTS = ("y", "hT", "dx", "dh0", "dW", "dR", "dbW", "dbR")
# What gru_v8 compares on a GPU: the inference pass's y and hT, then the training step's results.
GRU_GPU_CHECKS = ("y inference", "hT inference", *GRU_RESULTS)


@pytest.mark.gpu
@pytest.mark.parametrize("program,reported_line,expected", [
    ("lstm_train", r"^  (\w+)\s+([\d.e+-]+)$", TRAIN_RESULTS),
    ("gru_v8", r"^  (\w+(?: inference)?)\s+([\d.e+-]+)$", GRU_GPU_CHECKS)],
    ids=["lstm_train", "gru_v8"])
def test_a_training_program_reports_every_result_within_tolerance_on_a_gpu(built, program,
                                                                           reported_line, expected):
    if not _has_gpu():
        pytest.skip("needs a GPU")
    r = run(built / program)
    assert r.returncode == 0, (r.stdout, r.stderr)
    reported = dict(re.findall(reported_line, r.stdout, re.M))
    assert sorted(reported) == sorted(expected), r.stdout
    tol = _gpu_tolerance(program)
    assert all(float(v) <= tol for v in reported.values()), r.stdout


def _gru_reference(binary: Path) -> dict:
    r = run(binary, "--cpu-reference")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _torch_gru_training(d: dict, gate_order=(0, 1, 2)) -> dict:
    """The GRU program's results from PyTorch's nn.GRU: the forward pass, then the gradients of
    L = sum(y * dy) + sum(hT * dhy), by autograd, in float64. Weights are read in cuDNN's
    linLayerID order (r, z, n); `gate_order` puts them in another (and the gradients back)."""
    import torch
    T, B, IN, H = d["T"], d["B"], d["IN"], d["H"]
    order = list(gate_order)
    t = lambda key, *shape: torch.tensor(d[key], dtype=torch.float64).reshape(*shape)  # noqa: E731
    gru = torch.nn.GRU(IN, H).double()
    with torch.no_grad():
        gru.weight_ih_l0.copy_(t("W", 3, H, IN)[order].reshape(3 * H, IN))
        gru.weight_hh_l0.copy_(t("R", 3, H, H)[order].reshape(3 * H, H))
        gru.bias_ih_l0.copy_(t("bW", 3, H)[order].reshape(-1))
        gru.bias_hh_l0.copy_(t("bR", 3, H)[order].reshape(-1))
    x, h0 = t("x", T, B, IN).requires_grad_(), t("h0", 1, B, H).requires_grad_()
    y, h = gru(x, h0)
    ((y * t("dy", T, B, H)).sum() + (h * t("dhy", 1, B, H)).sum()).backward()
    back = np.argsort(order)

    def grad(param, *shape):
        return param.grad.numpy().reshape(*shape)[back].reshape(-1)
    return {"y": y.detach().numpy().reshape(-1), "hT": h.detach().numpy().reshape(-1),
            "dx": x.grad.numpy().reshape(-1), "dh0": h0.grad.numpy().reshape(-1),
            "dW": grad(gru.weight_ih_l0, 3, H, IN), "dR": grad(gru.weight_hh_l0, 3, H, H),
            "dbW": grad(gru.bias_ih_l0, 3, H), "dbR": grad(gru.bias_hh_l0, 3, H)}


def _gru_difference(d: dict, want: dict, keys=GRU_RESULTS) -> tuple[float, str]:
    return max((float(np.abs(np.array(d[k]) - want[k]).max()), k) for k in keys)


def test_gru_reference_matches_torch_autograd_and_a_wrong_gate_order_does_not(built):
    d = _gru_reference(built / "gru_v8")
    diff, where = _gru_difference(d, _torch_gru_training(d))
    assert diff < 1e-5, (where, diff)
    for k in GRU_RESULTS[2:]:  # no gradient is trivially zero
        assert np.abs(np.array(d[k])).max() > 0.1, k
    # The reset gate scales the recurrent product and its bias: the two biases of n get
    # different gradients (with the reset gate before the product they could not differ so).
    H = d["H"]
    assert np.abs(np.array(d["dbW"])[2 * H:] - np.array(d["dbR"])[2 * H:]).max() > 0.05
    # Reset and update gates exchanged: far above the GPU check's tolerance, forward and back.
    swapped = _torch_gru_training(d, gate_order=(1, 0, 2))
    assert _gru_difference(d, swapped, ("y", "hT"))[0] > 0.05 > 100 * _gpu_tolerance("gru_v8")
    assert _gru_difference(d, swapped, GRU_RESULTS[2:])[0] > 0.1


# Plausible mistakes in a hand-written GRU backward pass, planted in a copy of the program's
# reference: the comparison with autograd must catch each one, by far more than the GPU check's
# tolerance (the page says "more than a hundred times").
GRU_PLANTED = {
    "recurrent gradient of n not scaled by the reset gate":
        ("dr[b][2][j] = dn * r; /* the reset gate scales the recurrent product */",
         "dr[b][2][j] = dn;"),
    "hidden gradient not carried through the update gate":
        ("carry[b][j] = dhj * z;", "carry[b][j] = 0.0f;"),
}


@pytest.mark.parametrize("mistake", GRU_PLANTED)
def test_a_mistake_planted_in_the_gru_reference_is_caught(tmp_path, mistake):
    right, wrong = GRU_PLANTED[mistake]
    source = (C_DIR / "gru_v8.c").read_text()
    assert source.count(right) == 1, f"the line to break is no longer in gru_v8.c: {right}"
    (tmp_path / "planted.c").write_text(source.replace(right, wrong))
    built = subprocess.run(_gcc_line(tmp_path / "planted.c", tmp_path / "planted"),
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    d = _gru_reference(tmp_path / "planted")
    diff, where = _gru_difference(d, _torch_gru_training(d))
    assert diff > 100 * _gpu_tolerance("gru_v8"), (mistake, where, diff)


# Keras's GRU with the reference's weights: its kernel's columns are gates z, r, h (cuDNN's and
# PyTorch's order is r, z, n); its bias has two rows, input and recurrent. Run in a child process
# on the PyTorch backend: the cell's equations are Keras's own code (keras/src/layers/rnn/gru.py),
# the same on every backend.
KERAS_GRU = """
import json, sys
import numpy as np
import keras
d = json.load(sys.stdin)
T, B, IN, H = d["T"], d["B"], d["IN"], d["H"]
x = np.array(d["x"], dtype="float32").reshape(T, B, IN).transpose(1, 0, 2)
h0 = np.array(d["h0"], dtype="float32").reshape(B, H)
results = {"keras": keras.__version__, "backend": keras.backend.backend()}
for order in sys.argv[1:]:  # for Keras's gates z, r, h: which of cuDNN's gates (r, z, n)
    gates = [int(g) for g in order.split(",")]
    W = np.array(d["W"]).reshape(3, H, IN)[gates]
    R = np.array(d["R"]).reshape(3, H, H)[gates]
    bias = np.stack([np.array(d["bW"]).reshape(3, H)[gates].reshape(-1),
                     np.array(d["bR"]).reshape(3, H)[gates].reshape(-1)])
    layer = keras.layers.GRU(H, return_sequences=True, return_state=True, reset_after=True)
    layer.build((B, T, IN))
    layer.set_weights([np.concatenate(list(W), 0).T, np.concatenate(list(R), 0).T, bias])
    y, h = layer(x, initial_state=[h0])
    y = keras.ops.convert_to_numpy(y).transpose(1, 0, 2)
    results[order] = {"y": y.reshape(-1).tolist(),
                      "hT": keras.ops.convert_to_numpy(h).reshape(-1).tolist()}
print(json.dumps(results))
"""


def _keras_gru(d: dict, *orders: str) -> dict:
    r = subprocess.run([sys.executable, "-c", KERAS_GRU, *orders], input=json.dumps(d),
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "KERAS_BACKEND": "torch", "CUDA_VISIBLE_DEVICES": ""})
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_gru_reference_is_keras_gru_with_reset_after_and_its_gates_z_r_h(built):
    """What the page says of Keras: GRU(reset_after=True) computes the same GRU, its kernel's
    columns hold gates z, r, h, and its bias is two rows (input, recurrent)."""
    d = _gru_reference(built / "gru_v8")
    # Keras's z, r, h are cuDNN's gates 1, 0, 2; then the weights handed over in cuDNN's order.
    got = _keras_gru(d, "1,0,2", "0,1,2")
    assert (got["keras"], got["backend"]) == (md.version("keras"), "torch")
    assert _gru_difference(d, got["1,0,2"], ("y", "hT"))[0] < 1e-5
    assert _gru_difference(d, got["0,1,2"], ("y", "hT"))[0] > 0.05  # another model


def _gru_section(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    section = text[text.index("{ #gru }"):]
    return section[:section.index("\n## ")]


def test_the_gru_equations_quote_the_installed_pytorch_and_keras():
    """The GRU section's table and quotes, in both languages: each Keras cell is a line of the
    installed Keras's GRUCell, PyTorch's new-state formula is its nn.GRU docstring's, and what the
    page quotes of Keras's cuDNN path and docstring is in the installed Keras."""
    import importlib.util
    import torch
    # The installed Keras's files, found without importing it (which would import TensorFlow,
    # its default backend: some 6 CPU seconds).
    src = Path(importlib.util.find_spec("keras").origin).parent / "src"
    cell = (src / "layers" / "rnn" / "gru.py").read_text()
    tf_rnn = (src / "backend" / "tensorflow" / "rnn.py").read_text()
    code = re.compile(r"`([^`]+)`")
    tables = []
    for page in ("cudnn-c.md", "cudnn-c.es.md"):
        section = _gru_section(REPO / "docs" / page)
        rows = [line.strip().strip("|").split(" | ") for line in section.splitlines()
                if re.match(r"\| [^|`]+ \| (cuDNN|PyTorch|Keras) ", line)]
        assert len(rows) == 12 and all(len(r) == 3 for r in rows), (page, rows)
        # for each library, the code of its rows: four gates, in the table's order
        table = {lib: [code.findall(r[2]) for r in rows if r[1].startswith(lib)]
                 for lib in ("cuDNN", "PyTorch", "Keras")}
        assert all(len(formulas) == 4 for formulas in table.values()), (page, table)
        tables.append(table)
        prose = " ".join(section.split())
        assert '"canonical format is [z, r, h], whereas cuDNN is [r, z, h]"' in prose
        reset_before = ("recurrent_h = ops.matmul(r * h_tm1_h, "
                        "self.recurrent_kernel[:, self.units * 2 :])")
        assert f"`{reset_before}`" in prose
    assert tables[0] == tables[1], "both languages give the same equations"
    for line in (line for gate in tables[0]["Keras"] for line in gate):
        assert line in cell, f"not in Keras {md.version('keras')}'s gru.py: {line}"
    assert "canonical format is [z, r, h], whereas cuDNN is [r, z, h]" in tf_rnn
    assert ("recurrent_h = ops.matmul(\n                    r * h_tm1_h, "
            "self.recurrent_kernel[:, self.units * 2 :]") in cell  # reset_after=False
    assert "6. `reset_after` is `True`" in cell
    doc = " ".join(torch.nn.GRU.__doc__.split())
    assert (r"n_t = \tanh(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{(t-1)}+ b_{hn}))"
            r" \\ h_t = (1 - z_t) \odot n_t + z_t \odot h_{(t-1)}") in doc
    # The page writes the docstring's formula in plain text: the same terms in the same places.
    new_state = tables[0]["PyTorch"][2]
    assert new_state == ["n_t = tanh(W_in x_t + b_in + r_t ⊙ (W_hn h_(t-1) + b_hn))"]
    assert tables[0]["cuDNN"][2] == ["n = tanh(W_n x + bW_n + r ⊙ (R_n h + bR_n))"]


# --- the page: each program in one place, built from what the copy button copies -----------------

@functools.lru_cache(maxsize=None)
def _soup(page: Path):
    """A built page with its collapsed blocks opened (tests/built_pages.py), parsed once for all
    the tests that read it."""
    from bs4 import BeautifulSoup
    from built_pages import opened
    return BeautifulSoup(opened(page), "html.parser")


def _copied(code) -> str:
    """What Material's copy button puts on the clipboard: the code element's text, trailing
    white space removed (String.prototype.trimEnd)."""
    return code.get_text().rstrip()


def _tab_sets(page: Path) -> list[list[tuple[str, str]]]:
    """Each set of tabs on the page: (tab label, copied code) for every tab."""
    soup = _soup(page)
    sets = []
    for tabbed in soup.select("div.tabbed-set"):
        labels = [label.get_text().strip() for label in tabbed.select(".tabbed-labels > label")]
        blocks = tabbed.select(".tabbed-content > .tabbed-block")
        assert len(labels) == len(blocks), labels
        sets.append([(label, _copied(block.select_one("pre code")))
                     for label, block in zip(labels, blocks)])
    return sets


BUILD_TAB = {"": "Build and run", "es": "Compilar y ejecutar"}


def _program_tabs(site_root: Path, lang: str) -> dict[str, list[tuple[str, str]]]:
    page = (site_root / lang if lang else site_root) / "cudnn-c" / "index.html"
    found = {}
    for tabs in _tab_sets(page):
        labels = [label for label, _ in tabs]
        assert labels[-1] == BUILD_TAB[lang] and len(labels) == 3, labels
        found[labels[0]] = tabs
    return found


def _plain_reader_env() -> dict:
    """A reader's terminal: the virtualenv that holds the wheels first on PATH, nothing else."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = f"{Path(sys.executable).parent}:/usr/bin:/bin"
    env["LC_ALL"] = "C"
    return env


def test_each_program_builds_in_an_empty_folder_from_what_the_page_copies(site_root, tmp_path):
    """For each program the page gives whole: the files of its tabs, as copied, saved under
    their tab's name in an empty folder; the last tab, as copied, pasted into a shell there. The
    program compiles with -Werror and links; without a GPU it says so and exits with 77."""
    expected = {f"{p}.c" for p in BUILT_FROM_THE_PAGE}
    header = (C_DIR / "cudnn_check.h").read_text().rstrip()
    runs: dict[str, tuple] = {}  # the same tabs in both languages: built once
    for lang in BUILD_TAB:
        programs = _program_tabs(site_root, lang)
        assert set(programs) == expected, (lang, sorted(programs))
        for name, tabs in programs.items():
            files = dict(tabs[:-1])
            commands = tabs[-1][1]
            assert set(files) == {name, "cudnn_check.h"}, (lang, name, sorted(files))
            assert files["cudnn_check.h"] == header, (lang, name)
            for text in (*files.values(), commands):  # nothing meant for this site's build
                assert not re.search(r"snippet:|--8<--|\$OUT\b", text), (lang, name, text[:200])
            key = repr(sorted(files.items())) + commands
            if key not in runs:
                folder = tmp_path / f"{lang or 'en'}-{name}"
                folder.mkdir()
                for file, text in files.items():
                    (folder / file).write_text(text, encoding="utf-8")
                r = subprocess.run(["sh"], input=commands, cwd=folder, capture_output=True,
                                   text=True, timeout=300, env=_plain_reader_env())
                program = folder / name[:-2]
                assert program.is_file(), (lang, name, r.stderr[-3000:])  # compiled and linked
                runs[key] = (r.returncode, r.stdout, r.stderr, program)
            rc, out, err, program = runs[key]
            if name == "version.c":
                assert rc == 0 and "cudnnCreate:" in out, (rc, out, err)
            elif _has_gpu():
                assert rc == 0 and "OK: cuDNN matches the CPU reference" in out, (rc, out, err)
            else:
                assert rc == 77, (lang, name, rc, out, err)
                assert out.splitlines() == [out.strip()] and out.startswith(
                    "needs a GPU: no CUDA device"), (lang, name, out)
                ref = subprocess.run([str(program), "--cpu-reference"], capture_output=True,
                                     text=True, timeout=60)
                assert ref.returncode == 0 and json.loads(ref.stdout)["T"] == 5, ref.stderr
    assert len(runs) == len(expected)  # both languages copy the same files and commands


def test_the_install_line_names_the_wheels_the_commands_ask_for():
    """The page's pip line installs the three wheels the build commands import, the ones this
    project's requirements pin (and installs here)."""
    wanted = {"nvidia-cudnn-cu12", "nvidia-cuda-runtime-cu12", "nvidia-cuda-nvcc-cu12"}
    pinned = set(re.findall(r"^(nvidia-[\w-]+)==", (REPO / "requirements.txt").read_text(), re.M))
    assert wanted <= pinned and all(md.version(w) for w in wanted)
    for page in ("cudnn-c.md", "cudnn-c.es.md"):
        line = re.search(r"`python3 -m pip install ([^`]+)`", (REPO / "docs" / page).read_text())
        assert line and set(line.group(1).split()) == wanted, page
    for p in BUILT_FROM_THE_PAGE:  # the modules the commands ask python3 about
        commands = (C_DIR / f"build_{p}.sh").read_text()
        assert set(re.findall(r"import (nvidia\.\w+)", commands)) == {
            "nvidia.cudnn", "nvidia.cuda_runtime", "nvidia.cuda_nvcc"}, p


def test_the_page_shows_no_build_only_lines_in_its_code(site_root):
    """No code block of the C page, in either language, carries a line meant for this site's
    build: the `// snippet:` header, section markers, the build's own variables."""
    for lang in BUILD_TAB:
        page = (site_root / lang if lang else site_root) / "cudnn-c" / "index.html"
        blocks = [_copied(code) for code in _soup(page).select("div.highlight pre code")]
        assert len(blocks) >= 15, len(blocks)
        for text in blocks:
            assert not re.search(r"^\s*(//|#)\s*snippet:|--8<--|\$OUT\b|SNIPPET_", text, re.M), \
                (lang, text[:300])


# --- porting to cuDNN 9: the table of removed RNN calls and the messages quoted ------------------

# Every function declared in cuDNN 8's RNN headers (cudnn_adv_infer.h and cudnn_adv_train.h of
# cuDNN 8.2.1, as NVIDIA ships them), and whether they mark it CUDNN_DEPRECATED. Not installed
# here: cuDNN 8's wheels are not among this project's requirements.
CUDNN8_ADV = {
    "cudnnAdvInferVersionCheck": False, "cudnnAdvTrainVersionCheck": False,
    "cudnnBuildRNNDynamic": False, "cudnnCTCLoss": False, "cudnnCTCLoss_v8": False,
    "cudnnCreateAttnDescriptor": False, "cudnnCreateCTCLossDescriptor": False,
    "cudnnCreatePersistentRNNPlan": True, "cudnnCreateRNNDataDescriptor": False,
    "cudnnCreateRNNDescriptor": False, "cudnnCreateSeqDataDescriptor": False,
    "cudnnDestroyAttnDescriptor": False, "cudnnDestroyCTCLossDescriptor": False,
    "cudnnDestroyPersistentRNNPlan": True, "cudnnDestroyRNNDataDescriptor": False,
    "cudnnDestroyRNNDescriptor": False, "cudnnDestroySeqDataDescriptor": False,
    "cudnnFindRNNBackwardDataAlgorithmEx": True, "cudnnFindRNNBackwardWeightsAlgorithmEx": True,
    "cudnnFindRNNForwardInferenceAlgorithmEx": True,
    "cudnnFindRNNForwardTrainingAlgorithmEx": True, "cudnnGetAttnDescriptor": False,
    "cudnnGetCTCLossDescriptor": False, "cudnnGetCTCLossDescriptorEx": False,
    "cudnnGetCTCLossDescriptor_v8": False, "cudnnGetCTCLossWorkspaceSize": False,
    "cudnnGetCTCLossWorkspaceSize_v8": False, "cudnnGetMultiHeadAttnBuffers": False,
    "cudnnGetMultiHeadAttnWeights": False, "cudnnGetRNNBackwardDataAlgorithmMaxCount": True,
    "cudnnGetRNNBackwardWeightsAlgorithmMaxCount": True, "cudnnGetRNNBiasMode": True,
    "cudnnGetRNNDataDescriptor": False, "cudnnGetRNNDescriptor_v6": True,
    "cudnnGetRNNDescriptor_v8": False, "cudnnGetRNNForwardInferenceAlgorithmMaxCount": True,
    "cudnnGetRNNForwardTrainingAlgorithmMaxCount": True, "cudnnGetRNNLinLayerBiasParams": True,
    "cudnnGetRNNLinLayerMatrixParams": True, "cudnnGetRNNMatrixMathType": True,
    "cudnnGetRNNPaddingMode": True, "cudnnGetRNNParamsSize": True,
    "cudnnGetRNNProjectionLayers": True, "cudnnGetRNNTempSpaceSizes": False,
    "cudnnGetRNNTrainingReserveSize": True, "cudnnGetRNNWeightParams": False,
    "cudnnGetRNNWeightSpaceSize": False, "cudnnGetRNNWorkspaceSize": True,
    "cudnnGetSeqDataDescriptor": False, "cudnnMultiHeadAttnBackwardData": False,
    "cudnnMultiHeadAttnBackwardWeights": False, "cudnnMultiHeadAttnForward": False,
    "cudnnRNNBackwardData": True, "cudnnRNNBackwardDataEx": True,
    "cudnnRNNBackwardData_v8": False, "cudnnRNNBackwardWeights": True,
    "cudnnRNNBackwardWeightsEx": True, "cudnnRNNBackwardWeights_v8": False,
    "cudnnRNNForward": False, "cudnnRNNForwardInference": True,
    "cudnnRNNForwardInferenceEx": True, "cudnnRNNForwardTraining": True,
    "cudnnRNNForwardTrainingEx": True, "cudnnRNNGetClip": True, "cudnnRNNGetClip_v8": False,
    "cudnnRNNSetClip": True, "cudnnRNNSetClip_v8": False, "cudnnSetAttnDescriptor": False,
    "cudnnSetCTCLossDescriptor": False, "cudnnSetCTCLossDescriptorEx": False,
    "cudnnSetCTCLossDescriptor_v8": False, "cudnnSetPersistentRNNPlan": True,
    "cudnnSetRNNAlgorithmDescriptor": True, "cudnnSetRNNBiasMode": True,
    "cudnnSetRNNDataDescriptor": False, "cudnnSetRNNDescriptor_v6": True,
    "cudnnSetRNNDescriptor_v8": False, "cudnnSetRNNMatrixMathType": True,
    "cudnnSetRNNPaddingMode": True, "cudnnSetRNNProjectionLayers": True,
    "cudnnSetSeqDataDescriptor": False,
}
# The wheels that may own site-packages/nvidia/cudnn: both write its files.
CUDNN_WHEELS = ("nvidia-cudnn-cu12", "nvidia-cudnn-cu13")


def _header_owner() -> str:
    """The installed cuDNN wheel whose headers are on disk: every header matches its RECORD."""
    import base64
    import hashlib
    owners = []
    for name in CUDNN_WHEELS:
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        headers = [f for f in dist.files or [] if str(f).startswith("nvidia/cudnn/include/")]
        if headers and all(f.hash and base64.urlsafe_b64encode(hashlib.sha256(
                f.locate().read_bytes()).digest()).rstrip(b"=").decode() == f.hash.value
                for f in headers):
            owners.append(f"{name} {dist.version}")
    assert owners, f"the headers in {_wheel('cudnn')}/include match none of {CUDNN_WHEELS}"
    return owners[0]


def _removed_calls_table(page: Path) -> list[tuple[list[str], list[str], list[str]]]:
    """For each row of the page's table: the removed calls (first column), their replacements
    (the code in bold in the second) and the other code the second column names."""
    text = page.read_text(encoding="utf-8")
    section = text[text.index("{ #removed-rnn-calls }"):]
    section = section[:section.index("\n## ")]
    rows = [line.strip().strip("|").split(" | ") for line in section.splitlines()
            if line.startswith("| `")]
    assert all(len(cells) == 2 for cells in rows), "two columns"
    code = re.compile(r"`([^`]+)`")
    bold = re.compile(r"\*\*`([^`]+)`\*\*")
    return [(code.findall(old), bold.findall(new), code.findall(bold.sub("", new)))
            for old, new in rows]


def _row_of(page: Path, first_call: str) -> str:
    """The table row that starts with a removed call, as written."""
    return next(line for line in page.read_text(encoding="utf-8").splitlines()
                if line.startswith(f"| `{first_call}`"))


def _declared_function(name: str, text: str) -> re.Match | None:
    """`cudnnStatus_t CUDNNWINAPI name(` in a header; group 1 holds CUDNN_DEPRECATED if marked."""
    return re.search(rf"^(CUDNN_DEPRECATED\s+)?cudnnStatus_t\s+CUDNNWINAPI\s+{name}\s*\(",
                     text, re.M)


def _defined_constant(name: str, text: str) -> bool:
    """An enum value (`NAME = 1,`) or a macro (`#define NAME ...`)."""
    return bool(re.search(rf"^\s*#define {name}\b|^\s*{name}\s*=", text, re.M))


def test_the_removed_rnn_calls_table_holds_against_cudnn_8_and_the_installed_cudnn_9():
    owner = _header_owner()
    include = _wheel("cudnn") / "include"
    headers = _headers()
    adv = (include / "cudnn_adv.h").read_text()
    en_page = REPO / "docs" / "cudnn-c.md"
    en = _removed_calls_table(en_page)
    es = _removed_calls_table(REPO / "docs" / "cudnn-c.es.md")
    assert en == es and len(en) >= 15, "both languages give the same table"
    removed = [name for old, _, _ in en for name in old]
    assert len(removed) == len(set(removed))
    for name in removed:
        assert name in CUDNN8_ADV, f"{name}: not a call of cuDNN 8's RNN headers"
        assert not re.search(rf"\b{name}\b", headers), f"{name} is still in {owner}'s headers"
    for old, new, other in en:
        assert new, f"{old}: no replacement in bold"
        for name in new:  # declared in cudnn_adv.h, not deprecated
            if name.startswith("cudnn"):
                declared = _declared_function(name, adv)
                assert declared and not declared.group(1), \
                    f"{name}: not declared, or deprecated, in {owner}'s cudnn_adv.h"
            else:
                assert _defined_constant(name, adv), f"{name}: not in {owner}'s cudnn_adv.h"
            assert not CUDNN8_ADV.get(name, False), f"{name} was deprecated in cuDNN 8 already"
        for name in other:  # what the explanations name exists too
            if name.startswith("cudnn"):
                declared = _declared_function(name, headers)
                assert declared, f"{name}: not in {owner}'s headers"
                # a call the row says "still exists but is deprecated" is marked so
                if name.endswith("_v8") and "deprecated" in _row_of(en_page, old[0]):
                    assert declared.group(1), f"{name}: not CUDNN_DEPRECATED in {owner}"
            elif name.startswith("CUDNN_"):
                assert _defined_constant(name, headers), f"{name}: not in {owner}'s headers"
            elif name.startswith("lib"):
                assert (_wheel("cudnn") / "lib" / name).is_file(), f"{name}: not in {owner}"
            else:  # an argument of the v8 API
                assert re.search(rf"\b\w+ \*?{name}\s*[,)]", adv), \
                    f"{name}: no argument of that name in {owner}'s cudnn_adv.h"
    # Complete: every call of cuDNN 8's RNN headers is still declared, or the table names it.
    for name in CUDNN8_ADV:
        assert name in removed or re.search(rf"\b{name}\s*\(", headers), \
            f"{name}: gone from {owner}'s headers and missing from the table"
    # "cuDNN 8 had already marked these RNN calls deprecated (all but the version checks)".
    assert {n for n in removed if not CUDNN8_ADV[n]} == {"cudnnAdvInferVersionCheck",
                                                         "cudnnAdvTrainVersionCheck"}
    # cudnnRNNSetClip_v8 "still exists but is deprecated".
    assert _declared_function("cudnnRNNSetClip_v8", adv).group(1)


OLD_API_MESSAGES = C_DIR / "old_rnn_api_messages.txt"


def _old_api_messages() -> dict[str, list[str]]:
    sections = re.findall(r"^--8<-- \[start:([\w-]+)\]\n(.*?)^--8<-- \[end:\1\]",
                          OLD_API_MESSAGES.read_text(), re.S | re.M)
    return {name: body.strip().splitlines() for name, body in sections}


def test_the_quoted_messages_are_what_gcc_gxx_and_ld_print_for_the_old_api(tmp_path):
    """Code calling two removed functions, built with cuDNN 9's headers and library."""
    messages = _old_api_messages()
    assert set(messages) == {"gxx", "gcc", "ld", "nvcc"}
    old = ('#include <cudnn.h>\n'
           'int main(void)\n{\n'
           '    size_t bytes = 0;\n'
           '    cudnnGetRNNWorkspaceSize(0, 0, 5, 0, &bytes);\n'
           '    cudnnRNNForwardTraining(0);\n'
           '    return 0;\n}\n')
    (tmp_path / "old.c").write_text(old)
    (tmp_path / "old.cpp").write_text(old)
    cudnn, cudart, nvcc = _wheel("cudnn"), _wheel("cuda_runtime"), _wheel("cuda_nvcc")
    flags = [f"-I{cudnn}/include", f"-I{cudart}/include", f"-I{nvcc}/include"]
    env = dict(os.environ, LC_ALL="C")
    gxx = subprocess.run(["g++", "-c", "old.cpp", *flags], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, env=env)
    gcc = subprocess.run(["gcc", "-std=c11", "old.c", "-o", "old", *flags, f"-L{cudnn}/lib",
                          "-l:libcudnn.so.9"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env=env)
    assert gxx.returncode != 0 and gcc.returncode != 0
    for section, output in (("gxx", gxx.stderr), ("gcc", gcc.stderr), ("ld", gcc.stderr)):
        for line in messages[section]:
            assert line in output, f"{section}: {line!r} not in:\n{output}"
    # nvcc is not installed: its line is quoted from the thread both pages cite next to it.
    for page in ("cudnn-c.md", "cudnn-c.es.md"):
        text = (REPO / "docs" / page).read_text()
        nvcc_block = text.index('--8<-- "c/old_rnn_api_messages.txt:nvcc"')
        assert "https://github.com/root-project/root/issues/15413" in text[nvcc_block - 400:
                                                                           nvcc_block]
