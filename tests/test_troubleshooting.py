"""The troubleshooting page: every quoted message (data/messages.yml, shown with
<!-- message: ID -->) is either found verbatim in the installed library that produces it, or is
absent from it and the page cites an issue for it; the three errors the snippet reproduces are
the ones quoted."""
from __future__ import annotations

import ast
import importlib.util
import mmap
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO

MESSAGES = REPO / "data" / "messages.yml"
PAGE = REPO / "docs" / "troubleshooting.md"
MARKER = re.compile(r"<!-- message: ([\w-]+) -->")


def _pkg(name: str) -> Path:
    """A package's folder, without importing it (TensorFlow rewrites its own __path__)."""
    spec = importlib.util.find_spec(name)
    if spec.origin and spec.origin.endswith("__init__.py"):
        return Path(spec.origin).parent
    return Path(list(spec.submodule_search_locations)[0])  # namespace package (nvidia.*)


def messages() -> dict[str, str]:
    """Every message's text, from the registry the pages draw them from."""
    return {mid: entry["text"] for mid, entry in yaml.safe_load(MESSAGES.read_text()).items()}


def in_binary(path: Path, text: str) -> bool:
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return m.find(text.encode()) != -1


def python_strings(path: Path) -> set[str]:
    """Every string constant in a module (adjacent literals are joined by the parser)."""
    tree = ast.parse(path.read_text())
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


TF_FRAMEWORK = lambda: _pkg("tensorflow") / "libtensorflow_framework.so.2"  # noqa: E731
TF_CC = lambda: _pkg("tensorflow") / "libtensorflow_cc.so.2"  # noqa: E731

# Messages whose fixed parts must be in an installed binary. X and Y in the page stand for the
# versions TensorFlow fills in; the fragments are the parts around them.
IN_TENSORFLOW = {
    "dnn-init-failed": None,
    "no-driver": None,
    "dlopen": None,
    "version-mismatch": ["Loaded runtime CuDNN library: ", " but source was compiled with: ",
                         ".  CuDNN library needs to have matching major version and equal or "
                         "higher minor version. If using a binary install, upgrade your CuDNN "
                         "library.  If building from sources, make sure the library loaded at "
                         "runtime is compatible with the version specified during compile "
                         "configuration."],
    "xla": ["No registered '", "' OpKernel for ", " devices compatible with node"],
    "cudnn-factory": ["Unable to register cuDNN factory: ",
                      "Attempting to register factory for plugin %s when one has already been "
                      "registered"],
    "export-serve": ["No OpKernel was registered to support Op '"],
}
# The TFLite converter's message is in TensorFlow's other library; tf2onnx's is Python.
IN_TENSORFLOW_CC = {"export-tflite": "is neither a custom op nor a flex op"}
IN_TF2ONNX = {"export-onnx": ("tf2onnx.tfonnx", "Tensorflow op [%s: %s] is not supported")}
# Messages no installed library contains: the page must cite an issue for each. The part looked
# for in the installed library's files.
CITED = {"dnn-not-found": ("tensorflow", "DNN library is not found"),
         "fail-to-find": ("tensorflow", "Fail to find the dnn implementation")}
# Messages PyTorch prints only on a GPU, from its CUDA code: the part to look for, and the source
# file the page cites. The PyTorch installed here is the CUDA build (torch==2.14.1 from PyPI), so
# the text must be in its CUDA library; with no GPU to print them, the page marks them.
PYTORCH_CUDA_ONLY = {
    "pytorch-contiguous": ("RNN module weights are not part of single contiguous chunk of memory",
                           "aten/src/ATen/native/cudnn/RNN.cpp"),
    "pytorch-eval-backward": ("cudnn RNN backward can only be called in training mode",
                              "aten/src/ATen/native/cudnn/RNN.cpp"),
}
# Messages older PyTorch printed and the installed one no longer contains: the page cites the
# change that removed it and marks the entry.
PYTORCH_OLD_ONLY = {
    "pytorch-deterministic": ("it uses CuBLAS and you have CUDA >= 10.2",
                              "https://github.com/pytorch/pytorch/pull/161749"),
}
OLD_ONLY_MARK = {"md": "Older PyTorch only; not in the PyTorch this site runs",
                 "es.md": "Solo PyTorch antiguo; no está en el PyTorch que usa este sitio"}
CUDA_ONLY_MARK = {"md": "PyTorch prints this only on a GPU; not reproduced here",
                  "es.md": "PyTorch solo imprime esto en una GPU; no se reproduce aquí"}
# Messages the installed PyTorch produces on a CPU (reproduced by snippets/troubleshooting/pytorch_cpu.py).
IN_TORCH = {"pytorch-enforce-sorted"}


def test_every_quoted_message_exists_and_is_checked():
    found = messages()
    used = set(MARKER.findall(PAGE.read_text()))
    assert used <= set(found), used - set(found)
    checked = (set(IN_TENSORFLOW) | set(CITED) | set(PYTORCH_CUDA_ONLY) | set(PYTORCH_OLD_ONLY)
               | IN_TORCH | set(IN_TENSORFLOW_CC) | set(IN_TF2ONNX)
               | {"keras-mask", "use-cudnn-true", "tflite-tensor-list", "jax-outdated-cudnn"})
    assert used == checked, used ^ checked


@pytest.mark.parametrize("name", sorted(IN_TENSORFLOW))
def test_tensorflow_messages_are_in_the_installed_library(name):
    text = messages()[name]
    fragments = IN_TENSORFLOW[name] or [text]
    for frag in fragments:
        assert frag.replace("%s", "cuDNN") in text, (name, frag)
        assert in_binary(TF_FRAMEWORK(), frag), (name, frag)
    if name == "version-mismatch":
        assert text == "X".join(fragments[:1]) + "X" + fragments[1] + "Y" + fragments[2]
    if name == "xla":
        assert in_binary(TF_CC(), "CudnnRNNV3") and in_binary(TF_CC(), "XLA_GPU_JIT")


def test_export_messages_are_in_the_installed_converters():
    """The TFLite converter's and tf2onnx's words, as the export snippet prints them."""
    for name, frag in IN_TENSORFLOW_CC.items():
        assert messages()[name] == "'tf.CudnnRNNV3' op " + frag and in_binary(TF_CC(), frag), name
    for name, (module, template) in IN_TF2ONNX.items():
        source = _pkg(module.split(".")[0]) / (module.split(".")[1] + ".py")
        assert template in python_strings(source), (name, template)
        assert messages()[name] == f"ERROR:{module}:" + template % ("X", "CudnnRNNV3"), name


def test_keras_messages_are_in_the_installed_keras():
    keras_dir = _pkg("keras")
    msgs = messages()
    assert msgs["keras-mask"] in python_strings(keras_dir / "src/backend/tensorflow/rnn.py")
    assert msgs["use-cudnn-true"] in python_strings(keras_dir / "src/layers/rnn/lstm.py")


def test_cudnn_create_message_is_in_the_installed_cudnn():
    """The two lines the page says cuDNN itself writes (the C program's output shows them)."""
    lib = _pkg("nvidia.cudnn") / "lib" / "libcudnn_graph.so.9"
    for line in ("CUDNN_STATUS_NOT_INITIALIZED", "cudaGetDeviceCount(&count) != cudaSuccess"):
        assert in_binary(lib, line), line


def _sections(page: str) -> dict[str, str]:
    parts = re.split(r"^## ", page, flags=re.M)
    return {p.splitlines()[0]: p for p in parts[1:]}


@pytest.mark.parametrize("name", sorted(CITED))
def test_old_messages_are_absent_from_installed_libraries_and_cite_an_issue(name):
    package, key = CITED[name]
    assert key in messages()[name]
    libs = sorted(_pkg(package).rglob("*.so*"))
    assert libs
    assert not any(in_binary(p, key) for p in libs if p.is_file()), (name, key)
    for page in (PAGE, PAGE.with_suffix(".es.md")):
        sections = [s for s in _sections(page.read_text()).values()
                    if f"<!-- message: {name} -->" in s]
        assert len(sections) == 1, (page.name, name)
        assert re.search(r"\(https://github\.com/[\w.-]+/[\w.-]+/issues/\d+\)", sections[0])


def test_reproduced_errors_are_the_quoted_ones():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    r = subprocess.run([sys.executable, str(REPO / "snippets/troubleshooting/reproduce.py")],
                       capture_output=True, text=True, timeout=240, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = dict(line.split(": ", 1) for line in r.stdout.splitlines())
    msgs = messages()
    assert lines["use_cudnn"] == msgs["use-cudnn-true"]
    assert msgs["keras-mask"].startswith(lines["mask"])
    assert re.fullmatch(r"No registered 'CudnnRNNV3' OpKernel for XLA_(CPU|GPU)_JIT devices "
                        r"compatible with node", lines["xla"])
    assert lines["xla"].replace("XLA_CPU_JIT", "XLA_GPU_JIT") == msgs["xla"]
    # Keras's own training step fails the same way (keras-team/keras#18456)
    assert lines["xla_fit"] == "one_step_on_data: " + lines["xla"]


def test_xla_reproduction_uses_the_op_keras_calls():
    """The quoted op is the one the installed Keras and tf-keras build, and the snippet builds
    it through a Keras layer, not by hand."""
    keras_src = (_pkg("keras") / "src/backend/tensorflow/rnn.py").read_text()
    tfk_src = (_pkg("tf_keras") / "src/layers/rnn/lstm.py").read_text()
    for src in (keras_src, tfk_src):
        assert "CudnnRNNV3(" in src and not re.search(r"raw_ops\.CudnnRNN\(|gen_cudnn_rnn_ops\.cudnn_rnn\(", src)
    code = (REPO / "snippets/troubleshooting/reproduce.py").read_text()
    assert "raw_ops.CudnnRNN" not in code and "keras.layers.LSTM" in code


def test_page_embeds_the_same_things_in_both_languages():
    refs = re.compile(r'--8<-- "([^"]+)"|<!-- (?:output|message): (\S+) -->|\]\((https://[^)]+)\)')
    en = refs.findall(PAGE.read_text())
    es = refs.findall(PAGE.with_suffix(".es.md").read_text())
    assert en == es


def _torch_files() -> list[Path]:
    root = _pkg("torch")
    return [p for p in root.rglob("*") if p.is_file() and p.stat().st_size
            and (p.suffix == ".py" or ".so" in p.name)]


@pytest.fixture(scope="module")
def torch_files() -> list[Path]:
    return _torch_files()


@pytest.mark.parametrize("name", sorted(PYTORCH_CUDA_ONLY))
def test_cuda_only_pytorch_messages_are_in_the_cuda_library_cited_and_marked(name, torch_files):
    import torch
    assert torch.version.cuda, "a CPU-only PyTorch: requirements.txt pins the CUDA build"
    key, source = PYTORCH_CUDA_ONLY[name]
    assert key in messages()[name]
    cuda_lib = next(p for p in torch_files if p.name == "libtorch_cuda.so")
    assert in_binary(cuda_lib, key), (name, key)
    link = f"https://github.com/pytorch/pytorch/blob/v{torch.__version__.split('+')[0]}/{source}"
    for suffix, mark in CUDA_ONLY_MARK.items():
        page = PAGE.with_suffix("." + suffix)
        sections = [s for s in _sections(page.read_text()).values() if f"<!-- message: {name} -->" in s]
        assert len(sections) == 1, (page.name, name)
        assert mark in sections[0], (page.name, name, "no CUDA-only mark")
        assert link in sections[0], (page.name, name, f"no link to {link} (the installed torch)")


def test_pytorch_messages_a_cpu_prints_are_in_the_installed_torch(torch_files):
    lib = next(p for p in torch_files if p.name == "libtorch_cpu.so")
    for name in IN_TORCH:
        text = messages()[name].split(": ", 1)[1]
        assert in_binary(lib, text), name
        for suffix, mark in CUDA_ONLY_MARK.items():
            section = next(s for s in _sections(PAGE.with_suffix("." + suffix).read_text()).values()
                           if f"<!-- message: {name} -->" in s)
            assert mark not in section


def test_pytorch_cpu_snippet_prints_the_quoted_error():
    r = subprocess.run([sys.executable, str(REPO / "snippets/troubleshooting/pytorch_cpu.py")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "RuntimeError: " + messages()["pytorch-enforce-sorted"].split(": ", 1)[1] in r.stdout
    assert "torch.backends.cudnn.deterministic is still False" in r.stdout


def asserted_texts(code: str) -> list[str]:
    """The strings an `assert` of this code tests: written in it, or held by a name it reads
    that the code binds to a string once."""
    tree = ast.parse(code)
    bound: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value.value)
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            for sub in ast.walk(node.test):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    texts.append(sub.value)
                elif isinstance(sub, ast.Name) and len(bound.get(sub.id, [])) == 1:
                    texts += bound[sub.id]
    return texts


def test_pytorch_gpu_snippet_asserts_each_cuda_only_message():
    """The GPU run proves the quotes: its snippet asserts each CUDA-only message's text (inside
    an assert, not merely printed or in a comment)."""
    code = (REPO / "snippets/troubleshooting/pytorch_gpu.py").read_text()
    texts = asserted_texts(code)
    for name, (key, _source) in PYTORCH_CUDA_ONLY.items():
        assert any(key in t for t in texts), name
        # The reader of asserts is not fooled by a print or a comment of the same text.
        assert not any(key in t for t in asserted_texts(f"# {key}\nprint({key!r})\nassert x"))


@pytest.mark.parametrize("name", sorted(PYTORCH_OLD_ONLY))
def test_old_pytorch_messages_are_absent_here_cited_and_marked(name, torch_files):
    key, change = PYTORCH_OLD_ONLY[name]
    assert key in messages()[name]
    assert not any(in_binary(p, key) for p in torch_files), (name, key)
    # and the installed torch no longer documents the variable for deterministic mode
    import torch
    assert "CUBLAS_WORKSPACE_CONFIG" not in torch.use_deterministic_algorithms.__doc__
    for suffix, mark in OLD_ONLY_MARK.items():
        page = PAGE.with_suffix("." + suffix)
        sections = [s for s in _sections(page.read_text()).values() if f"<!-- message: {name} -->" in s]
        assert len(sections) == 1, (page.name, name)
        assert mark in sections[0] and f"({change})" in sections[0], (page.name, name)
        assert CUDA_ONLY_MARK[suffix] not in sections[0]


def test_one_cudnn_names_the_wheel_whose_files_are_installed():
    """Both cuDNN wheels are installed and write the same files; the page names the one whose
    files are on disk (their sha256 against each wheel's RECORD) and the PyTorch wheel's own pin."""
    import base64
    import hashlib
    import importlib.metadata as md

    dists = {n: md.distribution(n) for n in ("nvidia-cudnn-cu12", "nvidia-cudnn-cu13")}
    header = "nvidia/cudnn/include/cudnn_version.h"
    records = {n: next(f for f in d.files if str(f) == header) for n, d in dists.items()}
    assert records["nvidia-cudnn-cu12"].hash.value != records["nvidia-cudnn-cu13"].hash.value
    on_disk = base64.urlsafe_b64encode(hashlib.sha256(
        records["nvidia-cudnn-cu12"].locate().read_bytes()).digest()).rstrip(b"=").decode()
    owner = next(n for n, f in records.items() if f.hash.value == on_disk)
    owner_minor = ".".join(dists[owner].version.split(".")[:2])
    pin = next(r for r in md.requires("torch") if r.startswith("nvidia-cudnn"))
    name, wanted = re.match(r"(nvidia-cudnn-cu\d+)==([\d.]+)", pin).groups()
    torch_minor = ".".join(wanted.split(".")[:2])
    for suffix in ("md", "es.md"):
        text = " ".join(PAGE.with_suffix("." + suffix).read_text().split())
        assert f"`{owner}` {owner_minor}" in text and f"cuDNN {owner_minor}" in text, suffix
        assert f"`{name}` ({'exactly' if suffix == 'md' else 'exactamente'} {wanted})" in text
        assert torch_minor in text and "troubleshooting/cudnn_wheels.py" in text
