"""The troubleshooting page: every quoted message (data/messages.yml, shown with
<!-- message: ID -->) is either found verbatim in the installed library that produces it, or is
absent from it and the page cites an issue for it; the errors its snippets reproduce are the
ones quoted; the entries only a GPU shows are marked in both languages and link their source."""
from __future__ import annotations

import ast
import importlib.util
import mmap
import re
from pathlib import Path

import pytest
import yaml

from conftest import REPO, TROUBLESHOOTING, printed
from pipeline.claims.messages import load as load_messages

MESSAGES = REPO / "data" / "messages.yml"
PAGE = TROUBLESHOOTING["en"]  # every troubleshooting page, read as one (conftest.py)
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
    # XLA's cuDNN start-up, shared by TensorFlow and JAX (#cudnn-handle): the status, the memory
    "cudnn-handle-internal": ["Could not create cudnn handle: ", "CUDNN_STATUS_INTERNAL_ERROR"],
    "cudnn-handle-not-initialized": ["Could not create cudnn handle: ",
                                     "CUDNN_STATUS_NOT_INITIALIZED"],
    "cudnn-handle-memory": ["Memory usage: ", " bytes free, ", " bytes total."],
    "cudnn-handle-driver": ["Possibly insufficient driver version: "],
}
# The TFLite converter's message is in TensorFlow's other library; tf2onnx's is Python.
IN_TENSORFLOW_CC = {"export-tflite": "is neither a custom op nor a flex op"}
IN_TF2ONNX = {"export-onnx": ("tf2onnx.tfonnx", "Tensorflow op [%s: %s] is not supported")}
# Messages no installed library contains: the page must cite an issue for each. The part looked
# for in the installed library's files.
CITED = {"dnn-not-found": ("tensorflow", "DNN library is not found"),
         "fail-to-find": ("tensorflow", "Fail to find the dnn implementation"),
         # MIOpen's statuses, from PyTorch's ROCm build: the CUDA build installed here has none
         "miopen-unknown": ("torch", "miopenStatusUnknownError"),
         "miopen-bad-parm": ("torch", "miopenStatusBadParm"),
         "miopen-rocrand": ("torch", "rocrand/rocrand_xorwow.h"),
         # an older PyTorch's wording of the Dynamo stop (the installed one: dynamo-rnn)
         "dynamo-rnn-old": ("torch", "TorchDynamo purposely graph breaks"),
         # jaxlib's CUDA plugin writes it; the CPU jaxlib installed here has no RNN kernel
         "jax-rnn-zero-length": ("jaxlib", "cudnnRNNForward"),
         # XLA's start-up failure as JAX raises it: only jaxlib's CUDA plugin writes it
         "jax-dnn-init-failed": ("jaxlib", "DNN library initialization failed"),
         # cuDNN 8's loader; the cuDNN 9 installed here has no libcudnn_cnn_infer
         "cudnn8-libcuda-wsl": ("nvidia.cudnn", "libcudnn_cnn_infer.so.8")}
# Messages of libraries not installed here (shap, ONNX Runtime), quoted from threads: the entry
# links an issue that shows the text.
NOT_INSTALLED = {"shap-tfdeep": "shap", "ort-sequence-lens": "onnxruntime"}
# Printed by a release of the version matrix (a `record` backing): which releases, is checked
# against results/versions/ by tests/claims/test_messages.py.
FROM_THE_MATRIX = {mid for mid, e in yaml.safe_load(MESSAGES.read_text()).items() if "record" in e}
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
CUDA_ONLY_MARK = {"md": "PyTorch prints this only on a GPU", "es.md": "PyTorch solo imprime esto en una GPU"}
NOT_REPRODUCED = {"md": "; not reproduced here", "es.md": "; no se reproduce aquí"}
# Messages only a GPU prints that a GPU run of a snippet on the page printed: the snippet, whose
# current GPU record (results/) must hold the message's parts, in order, and whose output the
# entry shows. Their mark says "only on a GPU" without "not reproduced here"; the others keep it.
SHOWN_BY_A_GPU_RECORD = {"pytorch-contiguous": "troubleshooting/pytorch_gpu.py",
                         "pytorch-eval-backward": "troubleshooting/pytorch_gpu.py",
                         "pytorch-not-supported": "troubleshooting/long_sequence.py",
                         "keras-stateful-torch-inplace": "troubleshooting/keras_stateful_torch.py"}


def gpu_record_outputs(rel: str) -> list[str]:
    """What each current GPU record of a snippet printed (whitespace collapsed)."""
    from pipeline.records import store as records
    machines = records.load_all(REPO / "results", REPO / "snippets")
    return [re.sub(r"\s+", " ", r.data["stdout"]) for r in records.for_snippet(machines, rel)
            if not r.stale]


def assert_gpu_only_mark(section: str, name: str, suffix: str, where) -> None:
    """The entry says only a GPU prints it, and "not reproduced here" unless a GPU record shows
    it (SHOWN_BY_A_GPU_RECORD, checked by test_gpu_records_show_the_quoted_messages)."""
    assert CUDA_ONLY_MARK[suffix] in section, (*where, "no CUDA-only mark")
    recorded = name in SHOWN_BY_A_GPU_RECORD
    assert (NOT_REPRODUCED[suffix] in section) != recorded, (*where, "recorded" if recorded
                                                             else "not reproduced here")
# Messages the installed PyTorch produces on a CPU (reproduced by snippets/troubleshooting/pytorch_cpu.py).
IN_TORCH = {"pytorch-enforce-sorted"}
# The messages about the arguments of nn.LSTM, nn.GRU, nn.RNN, their cells and the packing
# functions that a CPU prints (snippets/troubleshooting/pytorch_arguments.py, their `output`
# backing): tests/content/test_pytorch_arguments.py checks them against the installed PyTorch.
PYTORCH_ARGUMENTS = {mid for mid, entry in yaml.safe_load(MESSAGES.read_text()).items()
                     if entry.get("output") == "troubleshooting/pytorch_arguments.py"}


def test_every_quoted_message_exists_and_is_checked():
    found = messages()
    used = set(MARKER.findall(PAGE.read_text()))
    assert used <= set(found), used - set(found)
    checked = (set(IN_TENSORFLOW) | set(CITED) | set(PYTORCH_CUDA_ONLY) | set(PYTORCH_OLD_ONLY)
               | IN_TORCH | set(IN_TENSORFLOW_CC) | set(IN_TF2ONNX)
               | {"keras-mask", "use-cudnn-true", "jax-outdated-cudnn"}
               | set(ONCE_CUDNN_RUNS) | PYTORCH_ARGUMENTS | set(NOT_INSTALLED)
               | (FROM_THE_MATRIX & used))
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


def _sections(pages) -> dict[str, str]:
    """Each `## ` section of the troubleshooting pages of a language, by its heading line, cut
    on its own page (a page's title and opening never join the page before it)."""
    found = {}
    for path in pages.paths():
        parts = re.split(r"^## ", path.read_text(encoding="utf-8"), flags=re.M)
        found.update({p.splitlines()[0]: p for p in parts[1:]})
    return found


@pytest.mark.parametrize("name", sorted(CITED))
def test_old_messages_are_absent_from_installed_libraries_and_cite_an_issue(name):
    package, key = CITED[name]
    assert key in messages()[name]
    libs = sorted(_pkg(package).rglob("*.so*"))
    assert libs
    assert not any(in_binary(p, key) for p in libs if p.is_file()), (name, key)
    for page in (PAGE, PAGE.with_suffix(".es.md")):
        sections = [s for s in _sections(page).values()
                    if f"<!-- message: {name} -->" in s]
        assert len(sections) == 1, (page.name, name)
        assert re.search(r"\(https://github\.com/[\w.-]+/[\w.-]+/issues/\d+\)", sections[0])


@pytest.mark.parametrize("name", sorted(NOT_INSTALLED))
def test_messages_of_libraries_not_installed_here_cite_a_thread(name):
    """shap's and ONNX Runtime's messages: the library is not installed (no check can read it),
    and the one entry that shows the message links an issue thread."""
    assert importlib.util.find_spec(NOT_INSTALLED[name]) is None, NOT_INSTALLED[name]
    for page in (PAGE, PAGE.with_suffix(".es.md")):
        sections = [s for s in _sections(page).values()
                    if f"<!-- message: {name} -->" in s]
        assert len(sections) == 1, (page.name, name)
        assert re.search(r"\(https://github\.com/[\w.-]+/[\w.-]+/issues/\d+\)", sections[0])


def test_reproduced_errors_are_the_quoted_ones():
    lines = dict(line.split(": ", 1) for line in printed("troubleshooting/reproduce.py").splitlines())
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
    for suffix in CUDA_ONLY_MARK:
        page = PAGE.with_suffix("." + suffix)
        sections = [s for s in _sections(page).values() if f"<!-- message: {name} -->" in s]
        assert len(sections) == 1, (page.name, name)
        assert_gpu_only_mark(sections[0], name, suffix, (page.name, name))
        assert link in sections[0], (page.name, name, f"no link to {link} (the installed torch)")


def test_pytorch_messages_a_cpu_prints_are_in_the_installed_torch(torch_files):
    lib = next(p for p in torch_files if p.name == "libtorch_cpu.so")
    for name in IN_TORCH:
        text = messages()[name].split(": ", 1)[1]
        assert in_binary(lib, text), name
        for suffix, mark in CUDA_ONLY_MARK.items():
            section = next(s for s in _sections(PAGE.with_suffix("." + suffix)).values()
                           if f"<!-- message: {name} -->" in s)
            assert mark not in section


def test_pytorch_cpu_snippet_prints_the_quoted_error():
    out = printed("troubleshooting/pytorch_cpu.py")
    assert "RuntimeError: " + messages()["pytorch-enforce-sorted"].split(": ", 1)[1] in out
    assert "torch.backends.cudnn.deterministic is still False" in out


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
    an assert, not merely printed or in a comment), or a current GPU record of it printed the
    text (the library's own words, caught and printed by the snippet)."""
    code = (REPO / "snippets/troubleshooting/pytorch_gpu.py").read_text()
    texts = asserted_texts(code)
    printed = gpu_record_outputs("troubleshooting/pytorch_gpu.py")
    for name, (key, _source) in PYTORCH_CUDA_ONLY.items():
        assert any(key in t for t in texts) or any(key in out for out in printed), name
    # The reader of asserts is not fooled by a print or a comment of the same text.
    assert not any("x" in t for t in asserted_texts("# x\nprint('x')\nassert y"))


@pytest.mark.parametrize("name", sorted(SHOWN_BY_A_GPU_RECORD))
def test_gpu_records_show_the_quoted_messages(name):
    """A message the page shows as printed on a GPU: a current GPU record of the snippet holds
    its parts in order, and the entry shows that snippet's output in both languages."""
    rel = SHOWN_BY_A_GPU_RECORD[name]
    outputs = gpu_record_outputs(rel)
    assert outputs, f"{rel}: no current GPU record"
    msg = load_messages(MESSAGES)[name]
    pieces = msg.parts or [msg.text.split(": ", 1)[1]]
    pattern = r".*?".join(re.escape(re.sub(r"\s+", " ", p)) for p in pieces)
    assert any(re.search(pattern, out) for out in outputs), (name, rel, pieces)
    for suffix in CUDA_ONLY_MARK:
        pages = PAGE.with_suffix("." + suffix)
        (section,) = [s for s in _sections(pages).values() if f"<!-- message: {name} -->" in s]
        anchor = re.search(r"\{ #([\w-]+) \}", section.splitlines()[0]).group(1)
        # the output on the entry's own page, linked from the entry (#pytorch-messages)
        page = pages.page_of(anchor).read_text(encoding="utf-8")
        shown = f"<!-- output: {rel} -->" in section or (
            f"<!-- output: {rel} -->" in page and "(#pytorch-messages)" in section)
        assert shown, (suffix, name, f"the entry shows no output of {rel}")


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
        sections = [s for s in _sections(page).values() if f"<!-- message: {name} -->" in s]
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


# --- What breaks once cuDNN runs: the entries answering readers' threads of 2024-2026 ---------
# (data/threads.yml lists the threads; tests/claims/test_threads.py keeps each one answered.)
# Each quoted message: where its fixed words live in the installed library that writes it, and,
# when a snippet on the page produces it here, that snippet.
TORCH_LIB = lambda name: _pkg("torch") / "lib" / name  # noqa: E731
ONCE_CUDNN_RUNS = {
    # name: (kind, where, fragments, snippet that prints it here or None)
    "dornn-forward": ("format", "tf_cc", None, None),  # rebuilt from its format strings below
    "keras-stateful-dynamic": ("python", "keras:src/layers/rnn/rnn.py",
                               ["When using `stateful=True` in a RNN, the batch size must be "
                                "static. Found dynamic batch size: sequence.shape="],
                               "troubleshooting/keras_stateful.py"),
    "keras-stateful-batch": ("python", "keras:src/layers/rnn/rnn.py",
                             ["If an RNN is stateful, the batch size of the input sequences must "
                              "be the same as the batch size of the initial state. "],
                             "troubleshooting/keras_stateful.py"),
    "keras-stateful-fit": ("binary", "tf_cc", ["Incompatible shapes: "],
                           "troubleshooting/keras_stateful.py"),
    "tflite-tensor-list": ("binary", "tf_cc", None, "troubleshooting/keras_tflite_lstm.py"),
    "tflite-element-shape": ("binary", "tf_cc",
                             ["requires element_shape to be static during TF Lite "
                              "transformation pass"], None),
    "tflite-flex": ("binary", "tf_cc", None, "troubleshooting/keras_tflite_lstm.py"),
    "pytorch-not-supported": ("binary", "libtorch_cuda.so",
                              ["cuDNN error: ", ". This error may appear if you passed in a "
                               "non-contiguous input."], None),
    "pytorch-double-backward": ("binary", "libtorch_cpu.so",
                                ["the derivative for '", "' is not implemented.",
                                 "_cudnn_rnn_backward"], None),
    "pytorch-internal-error": ("binary", "libtorch_cuda.so", ["cuDNN error: "], None),
    "pytorch-not-initialized": ("binary", "libtorch_cuda.so", ["cuDNN error: "], None),
    "keras-stateful-torch-inplace": ("binary", "libtorch_cpu.so",
                                     ["one of the variables needed for gradient computation has "
                                      "been modified by an inplace operation: [", " is at version ",
                                      "; expected version ", " instead."], None),
    "pytorch-async": ("binary", "libc10_cuda.so", None, None),
    "pytorch-bf16-cell": ("old", None, None, None),  # composed at run time: see its own test
    "onnx-static-length": ("python", "torch:_export/non_strict_utils.py",
                           ["Received user-specified dim hint Dim.DYNAMIC(min=",
                            "), but tracing inferred a static shape of "],
                           "troubleshooting/torch_onnx_length.py"),
    # the line of "Constraints violated (T)! ..." that names the cause (the snippet prints both)
    "export-specialized": ("python", "torch:fx/experimental/symbolic_shapes.py",
                           ["You marked ",
                            " as dynamic but your code specialized it to be a constant ("],
                           "troubleshooting/torch_onnx_length.py"),
    # PyTorch's cuDNN RNN checks the states it hands cuDNN (#pytorch-gpu-arguments)
    "torch-hx-contiguous": ("binary", "libtorch_cuda.so", ["rnn: hx is not contiguous"], None),
    "torch-cx-contiguous": ("binary", "libtorch_cuda.so", ["rnn: cx is not contiguous"], None),
    "torch-dtype-hidden": ("binary", "libtorch_cuda.so",
                           ["Input and ", " tensors are not the same dtype, found input tensor "
                            "with "], None),
    # Python's own words; the page quotes them from a thread (ultralytics/ultralytics#20348)
    "onnxscript-missing": ("import", "torch:onnx/_internal/exporter/_core.py", ["onnxscript"],
                           None),
    # Issue 54: tools that differentiate a model, sequences at the edges, compilers, other GPUs
    "torch-vmap-lstm": ("binary", "libtorch_cpu.so", ["Batching rule not implemented for ",
                                                      "We could not generate a fallback."],
                        "troubleshooting/vmap_rnn.py"),
    "torch-vmap-gru": ("binary", "libtorch_cpu.so", ["Batching rule not implemented for ",
                                                     "We could not generate a fallback."],
                       "troubleshooting/vmap_rnn.py"),
    "torch-vmap-cell": ("binary", "libtorch_cpu.so",
                        ["There is a performance drop because we have not yet implemented "],
                        "troubleshooting/vmap_rnn.py"),
    "torch-seq-len-zero": ("binary", "libtorch_cpu.so",
                           ["Expected sequence length to be larger than 0 in RNN"],
                           "troubleshooting/zero_length.py"),
    "jax-rnn-tracer": ("python", "jax:_src/custom_derivatives.py",
                       ["Tracers cannot be passed as non-differentiable arguments to custom_vjp "
                        "functions; "], "troubleshooting/jax_rnn_jit.py"),
    "dynamo-rnn": ("python", "torch:_dynamo/variables/builder.py",
                   ["Attempted to wrap RNN, GRU, or LSTM"], "criteria/pytorch/compile.py"),
    "onednn-lstm": ("binary", "libtorch_cpu.so",
                    ["could not create a primitive descriptor for the LSTM forward propagation "
                     "primitive."], None),
    # Python's own AttributeError, about an attribute the installed library lacks: printed here
    "jax-rnn-cpu": ("attribute", None, None, "troubleshooting/jax_rnn_jit.py"),
    "torchscript-forward": ("attribute", None, None, "troubleshooting/torchscript_lstm.py"),
}
# The cuDNN status in a message is cuDNN's own name for it.
STATUS_IN = {"pytorch-not-supported": "CUDNN_STATUS_NOT_SUPPORTED",
             "pytorch-internal-error": "CUDNN_STATUS_INTERNAL_ERROR",
             "pytorch-not-initialized": "CUDNN_STATUS_NOT_INITIALIZED"}
# Entries whose message only a GPU prints, and those of older releases only.
GPU_ONLY_ENTRIES = {"dornn-failed": "Only a GPU prints this; not reproduced here",
                    "gru-return-state": "Only a GPU shows this; not reproduced here"}
GPU_ONLY_ENTRIES_ES = {"dornn-failed": "Solo una GPU imprime esto; no se reproduce aquí",
                       "gru-return-state": "Solo una GPU muestra esto; no se reproduce aquí"}
# PyTorch messages only a GPU prints, and the source file that writes each (linked at the
# installed release, as for PYTORCH_CUDA_ONLY).
PYTORCH_GPU_ONLY = {"pytorch-not-supported": "aten/src/ATen/cuda/Exceptions.h",
                    "pytorch-double-backward": "torch/csrc/autograd/FunctionsManual.cpp",
                    "pytorch-internal-error": "aten/src/ATen/cuda/Exceptions.h",
                    "pytorch-not-initialized": "aten/src/ATen/cuda/Exceptions.h",
                    "torch-hx-contiguous": "aten/src/ATen/native/cudnn/RNN.cpp",
                    "torch-cx-contiguous": "aten/src/ATen/native/cudnn/RNN.cpp",
                    "torch-dtype-hidden": "aten/src/ATen/native/cudnn/RNN.cpp"}


def _source(where: str) -> Path:
    package, rel = where.split(":")
    return _pkg(package) / rel


def _library(where: str) -> Path:
    return TF_CC() if where == "tf_cc" else TORCH_LIB(where)


def _snippet_output(rel: str) -> str:
    """What the snippet printed in this build, white space runs as one space."""
    return re.sub(r"\s+", " ", printed(rel))


@pytest.mark.parametrize("name", sorted(n for n, v in ONCE_CUDNN_RUNS.items()
                                         if v[0] in ("binary", "python", "import")))
def test_runtime_messages_are_in_the_library_that_writes_them(name):
    kind, where, fragments, _ = ONCE_CUDNN_RUNS[name]
    text = messages()[name]
    if kind == "binary":
        for frag in fragments or [text]:
            assert frag in text, (name, frag)
            assert in_binary(_library(where), frag), (name, frag, where)
    elif kind == "python":
        constants = python_strings(_source(where))
        for frag in fragments:
            assert frag.replace("\n", "").strip() in text, (name, frag)
            assert any(frag in c for c in constants), (name, frag, where)
    elif kind == "import":
        tree = ast.parse(_source(where).read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert fragments[0] in imported and fragments[0] in text, name
    if name in STATUS_IN:  # the status name comes from cuDNN's own error strings
        lib = _pkg("nvidia.cudnn") / "lib" / "libcudnn_graph.so.9"
        assert STATUS_IN[name] in text and in_binary(lib, STATUS_IN[name]), name


def test_the_dornn_line_is_tensorflows_format_filled_in():
    """The quoted line (tensorflow/tensorflow#99870, TF 2.17) is TensorFlow 2.21's format with
    the numbers of that call; the backward pass has the same words."""
    prefix = "Failed to call DoRnnForward with model config: "
    modes = "[rnn_mode, rnn_input_mode, rnn_direction_mode]: %d, %d, %d "
    sizes = ("[num_layers, input_size, num_units, dir_count, max_seq_length, batch_size, "
             "cell_num_units]: [%d, %d, %d, %d, %d, %d, %d] ")
    for frag in (prefix, modes, sizes, "Failed to call DoRnnBackward with model config: "):
        assert in_binary(TF_CC(), frag), frag
    filled = prefix + modes % (2, 0, 0) + ", " + sizes % (1, 19, 64, 1, 1, 32, 64)
    assert messages()["dornn-forward"] == filled.rstrip()


@pytest.mark.parametrize("name", sorted(n for n, v in ONCE_CUDNN_RUNS.items() if v[3]))
def test_messages_reproduced_here_are_what_the_snippets_printed(name):
    printed = _snippet_output(ONCE_CUDNN_RUNS[name][3])
    msg = load_messages(MESSAGES)[name]
    if msg.parts:  # the library fills something in: its own pieces, in order, on one line
        pattern = r"\S*?".join(re.escape(re.sub(r"\s+", " ", p)) for p in msg.parts)
        assert re.search(pattern, printed), (name, msg.parts)
        return
    text = re.sub(r"\s+", " ", msg.text)
    if name == "export-specialized":  # the snippet prints the error's first line, then this one
        assert "Constraints violated (" in python_strings(_source(ONCE_CUDNN_RUNS[name][1]))
        text = "Constraints violated (T)! " + text
    if name.startswith("keras-stateful"):  # printed without the exception's class
        text = text.split(": ", 1)[1]
    if name in ("tflite-tensor-list", "tflite-flex"):  # printed up to "flag" / the first period
        text = text.split(" in the TFLite converter")[0].split(" Make sure")[0]
    assert text in printed, (name, text)


def test_cudnn_status_descriptions_are_cudnns_own():
    """The DoRnnForward entry quotes how cuDNN's header describes four statuses."""
    header = (_pkg("nvidia.cudnn") / "include" / "cudnn_graph.h").read_text()
    page = PAGE.read_text()
    for status, words in [("CUDNN_STATUS_BAD_PARAM", "Invalid parameter value"),
                          ("CUDNN_STATUS_NOT_SUPPORTED", "Operation not supported"),
                          ("CUDNN_STATUS_EXECUTION_FAILED", "Execution failed"),
                          ("CUDNN_STATUS_INTERNAL_ERROR", "Internal error")]:
        assert re.search(rf"{status}\s*=\s*\d+,\s*/\*\*< {words}\.", header), status
        assert re.search(rf"`{status}`\s+\"{words}\"", " ".join(page.split())), status


def test_gpu_only_entries_are_marked_in_both_languages():
    for page, marks in ((PAGE, GPU_ONLY_ENTRIES), (PAGE.with_suffix(".es.md"), GPU_ONLY_ENTRIES_ES)):
        sections = _sections(page)
        for anchor, mark in marks.items():
            (section,) = [s for h, s in sections.items() if f"{{ #{anchor} }}" in h]
            assert mark in section, (page.name, anchor)
        import torch
        release = torch.__version__.split("+")[0]
        for name, source in PYTORCH_GPU_ONLY.items():
            (section,) = [s for s in sections.values() if f"<!-- message: {name} -->" in s]
            suffix = "es.md" if page.name.endswith(".es.md") else "md"
            assert_gpu_only_mark(section, name, suffix, (page.name, name))
            link = f"https://github.com/pytorch/pytorch/blob/v{release}/{source}"
            assert link in section, (page.name, name, f"no link to {link} (the installed torch)")


def test_the_installed_keras_returns_the_cudnn_gru_state_in_a_list():
    """keras-team/keras#21603 (3.11.3, 3.12.0): `_cudnn_gru` returns `[state]`, so
    GRU(return_state=True) returns one state of shape (batch, units). Before it, the bare state
    was unpacked along the batch. The GPU test runs it."""
    tree = ast.parse((_pkg("keras") / "src/backend/tensorflow/rnn.py").read_text())
    (func,) = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_cudnn_gru"]
    (ret,) = [n for n in ast.walk(func) if isinstance(n, ast.Return)]
    assert isinstance(ret.value, ast.Tuple) and isinstance(ret.value.elts[2], ast.List)


def test_only_tf_keras_marks_its_lstm_for_the_tflite_fusion():
    """tf-keras tags its LSTM function with `api_implements`; Keras 3 does not, so the
    converter writes a loop instead of UNIDIRECTIONAL_SEQUENCE_LSTM (the snippet shows both)."""
    tfk = (_pkg("tf_keras") / "src/layers/rnn/gru_lstm_utils.py").read_text()
    assert '"api_implements"' in tfk
    keras_rnn = [_pkg("keras") / "src/backend/tensorflow/rnn.py",
                 *sorted((_pkg("keras") / "src/layers/rnn").glob("*.py"))]
    assert not any("implements" in p.read_text() for p in keras_rnn)


def test_the_current_onnx_exporter_is_the_default_and_needs_onnxscript():
    import inspect

    import torch
    assert inspect.signature(torch.onnx.export).parameters["dynamo"].default is True


def test_the_installed_pytorch_has_a_bfloat16_fused_lstm_cell(torch_files):
    """pytorch/pytorch#116925 ("_thnn_fused_lstm_cell_cuda" not implemented for 'BFloat16') is
    gone: PyTorch 2.14.1's CUDA library holds that kernel's bfloat16 instances."""
    lib = next(p for p in torch_files if p.name == "libtorch_cuda.so")
    assert in_binary(lib, "lstm_cell_forwardIN3c108BFloat16E")
    assert in_binary(lib, "_thnn_fused_lstm_cell_cuda")
    for suffix, mark in OLD_ONLY_MARK.items():
        sections = _sections(PAGE.with_suffix("." + suffix))
        (section,) = [s for s in sections.values() if "<!-- message: pytorch-bf16-cell -->" in s]
        assert mark in section and "pytorch/pytorch/issues/116925" in section


def test_the_pages_the_build_lists_are_the_pages_in_docs():
    """data/troubleshooting.yml lists the pages the build puts in the index and the nav; the
    tests read docs/troubleshooting/ itself: a page written but not listed, or listed but not
    written, fails here."""
    listed = set(yaml.safe_load((REPO / "data" / "troubleshooting.yml").read_text())["pages"])
    for pages in (PAGE, PAGE.with_suffix(".es.md")):
        written = {p.name.split(".")[0] for p in pages.paths()} - {"index"}
        assert written == listed, (pages.name, sorted(written ^ listed))
