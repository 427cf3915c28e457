"""snippets/cudnn_check.py's probe: check_model asks the library on the reader's model.

The agreement runs tests/judge_keras.py, an independent judge, once per Keras 3 backend and once
for tf-keras, in one process per backend, all three at once (tests/framework_batch.py; the
TensorFlow one runs Keras 3's judge, then tf-keras's, each a program of its own). The judge
pretends a GPU in the framework (tf.config, jax.default_backend, torch.cuda) and watches the
framework call that runs cuDNN (CudnnRNNV3, the rnn_fwd primitive, torch._VF.lstm/gru,
tf-keras's gpu_lstm); the probe patches Keras's own functions instead. Each judge run also
plants one wrong rule in the checker and must catch it (a mutation test). The rest checks what a
reader sees: masks that depend on the padding, the one-line fallback, wrappers, PyTorch modules
the old checker could not see, the dtype policy, and the command line under Keras 2."""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "snippets"))
sys.path.insert(0, str(REPO / "snippets" / "criteria" / "tf_backend"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402  (the TensorFlow backend, as in tests/content/test_cudnn_check.py)
import tf_keras  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

import cudnn_check  # noqa: E402
from _pretend_gpu import pretend_gpu  # noqa: E402  (the criteria pages' helper, not the checker)
import framework_batch  # noqa: E402  (tests/: one process per backend)
import keras3_witness  # noqa: E402  (tests/: the judge's instrument)

JUDGE = REPO / "tests" / "judge_keras.py"
CHECKER = REPO / "snippets" / "cudnn_check.py"
# Seeds whose models include some that take cuDNN (on JAX and PyTorch most do not), so the
# comparison can fail both ways; every shape and mask source comes round whatever the seed.
RUNS = {"tensorflow": ["--models", 24], "jax": ["--models", 12, "--seed", 1],
        "torch": ["--models", 24, "--seed", 2], "tf_keras": ["--keras2", "--models", 16]}
# And models of every other recurrent layer (#43): two rounds of the kinds on the TensorFlow and
# PyTorch backends, one on JAX (the slowest to trace), three on tf-keras (more kinds and cells);
# each round brings two cells, and the seeds spread the cells over the backends.
OTHERS = {"tensorflow": 24, "jax": 12, "torch": 24, "tf_keras": 45}


@pytest.fixture(scope="module")
def k2_files(tmp_path_factory):
    """A tf-keras model saved as .keras and .h5, and two samples (one not numpy), for the
    command line under Keras 2 (test_cli_loads_tf_keras_files_and_takes_a_sample)."""
    d = tmp_path_factory.mktemp("k2")
    m = tf_keras.Sequential([tf_keras.Input((5,), dtype="int32"),
                             tf_keras.layers.Embedding(10, 3, mask_zero=True),
                             tf_keras.layers.LSTM(3, name="enc")], name="k2")
    for suffix in (".keras", ".h5"):
        m.save(d / f"k2{suffix}")
    np.savez(d / "post.npz", np.array([[1, 2, 3, 0, 0], [4, 5, 0, 0, 0]]))
    (d / "bad.npz").write_text("not numpy")
    return d


@pytest.fixture(scope="module")
def judged(k2_files):
    """The judges, one process per backend, all three at once (tests/framework_batch.py): the
    TensorFlow process judges Keras 3 and then tf-keras (each judge run as a program of its own,
    TensorFlow imported once for both), and then runs the command line under Keras 2. Each
    judge answers with one JSON line."""
    def judge(name):
        return {"argv": [JUDGE, *RUNS[name], "--others", OTHERS[name]], "cwd": REPO}
    batches = {"tensorflow": {"tensorflow": judge("tensorflow"), "tf_keras": judge("tf_keras"),
                              "cli_keras2": {"code": CLI_KERAS2, "cwd": k2_files,
                                             "env": {"TF_USE_LEGACY_KERAS": "1"}}},
               "jax": {"jax": judge("jax")}, "torch": {"torch": judge("torch")}}
    waiting = {backend: framework_batch.run(list(jobs.values()), background=True, env={
        "KERAS_BACKEND": backend, "TF_CPP_MIN_LOG_LEVEL": "3",
        "PYTHONPATH": str(REPO / "snippets")}) for backend, jobs in batches.items()}
    out = {}
    for backend, wait in waiting.items():
        for name, proc in zip(batches[backend], wait()):
            out[name] = proc if name == "cli_keras2" else (proc.returncode, proc.stdout,
                                                          proc.stderr)
    return out


@pytest.mark.parametrize("name", list(RUNS))
def test_checker_agrees_with_the_library_on_generated_models(judged, name):
    rc, stdout, stderr = judged[name]
    assert stdout.strip(), stderr[-3000:]
    report = json.loads(stdout.strip().splitlines()[-1])
    assert report["mismatches"] == [], json.dumps(report["mismatches"][:4], indent=1)
    assert report["probed"] == report["models"]
    shapes = {"plain", "bidirectional", "nested", "holder", "user_lstm", "shared"}
    shapes |= set() if name == "tf_keras" else {"lambda"}  # tf-keras's Lambda tracks layers
    masks = {"mask:none", "mask:masking", "mask:embedding"}
    saved = {"saved.keras", "saved.h5"} if name == "tf_keras" else {"saved.keras"}
    assert shapes | masks | saved <= set(report["covered"]), report["covered"]
    # Both answers occur, so the comparison can fail either way.
    assert 0 < report["eligible"] < report["models"], report
    # A checker with a planted wrong rule disagrees with this judge on some model.
    assert report["planted"]["caught_by_model"] is not None, report["planted"]
    assert rc == 0, stderr[-3000:]


KINDS = {"simple_rnn", "conv_lstm", "rnn_cell", "rnn_cell_list", "cell_loop", "dense_loop",
         "weight_loop", "bidirectional", "time_distributed", "nested", "control", "not_a_loop"}


@pytest.mark.parametrize("name", list(RUNS))
def test_checker_names_every_other_recurrent_layer_with_the_librarys_verdict(judged, name):
    """SimpleRNN, ConvLSTM1D/2D/3D, RNN over any cell (Keras's, stacked, wrapped, yours),
    cells and layers of yours that loop over time steps, wrapped and nested, and on tf-keras
    also the TF 1 LSTM/GRU, CuDNNLSTM/CuDNNGRU and a layer running tf_keras.backend.rnn: on
    each model the judge's witness (the framework call that runs cuDNN) decides whether every
    recurrent direction takes cuDNN. The checker's report must be empty exactly then, it must
    name the layer judged, and (when it is alone in the model) give it the library's verdict.
    A checker that lets these layers pass as the old one did is caught, and so is one that
    takes a loop whose steps do not feed each other (a layer per frame, a score per step) for
    a hand-written RNN (#60)."""
    rc, stdout, stderr = judged[name]
    assert stdout.strip(), stderr[-3000:]
    report = json.loads(stdout.strip().splitlines()[-1])["others"]
    assert report and report["models"] == OTHERS[name], report
    assert report["mismatches"] == [], json.dumps(report["mismatches"][:4], indent=1)
    kinds = KINDS | ({"v1", "cudnn", "backend_loop"} if name == "tf_keras" else set())
    assert kinds <= set(report["covered"]), report["covered"]
    assert "saved:no" in report["covered"] and any(
        c.startswith("saved.") for c in report["covered"]), report["covered"]
    # Both answers occur (the controls, an LSTM or GRU alone, and tf-keras's CuDNN layers).
    assert 0 < report["eligible"] < report["models"], report
    assert report["planted"] and None not in report["planted"].values(), \
        report["planted"]
    assert rc == 0, stderr[-3000:]


def test_other_recurrent_layers_cover_every_cell_across_the_backends(judged):
    """The cells of Keras and of yours, stacked and wrapped, each judged on some backend (and
    tf-keras's own cell wrappers on tf-keras), and each loop that is not a recurrence."""
    covered = set()
    for name in RUNS:
        rc, stdout, stderr = judged[name]
        assert stdout.strip(), stderr[-3000:]
        covered |= set(json.loads(stdout.strip().splitlines()[-1])["others"]["covered"])
    cells = {"LSTMCell", "GRUCell", "SimpleRNNCell", "StepCell", "stacked", "WrapCell",
             "ResidualWrapper", "DropoutWrapper"}
    assert {f"cell:{c}" for c in cells} <= covered, sorted(covered)
    # loops over time steps that carry no state (#60): a layer per frame, a score per step
    assert {f"not_a_loop:{v}" for v in ("views", "frames", "scores")} <= covered, sorted(covered)


# ----------------------------------------------------------------- masks, per batch
def _masked_model():
    inp = keras.Input((5,), dtype="int32")
    x = keras.layers.Embedding(10, 3, mask_zero=True)(inp)
    return keras.Model(inp, keras.layers.LSTM(3, name="enc")(x), name="m")


def test_tf_backend_mask_depends_on_padding():
    """Without a sample the TF backend's verdict depends on the padding; with one it is what
    Keras decides on that batch: the judge's witness, the calls of TensorFlow's cuDNN op
    (CudnnRNNV3, which Keras calls after its own mask check) with a GPU listed by tf.config."""
    model = _masked_model()
    report = cudnn_check.check_model(model)
    assert [(f.layer, f.criterion, f.source) for f in report] == [
        ("m/enc", "depends_on_padding", "probe")]
    assert report.layers == [("m/enc", "LSTM", "depends on the padding")]
    post = keras.utils.pad_sequences([[3, 7, 2], [5, 1]], maxlen=5, padding="post")
    pre = keras.utils.pad_sequences([[3, 7, 2], [5, 1]], maxlen=5)
    assert [keras3_witness.cudnn_directions(model, b) for b in (post, pre)] == [1, 0]
    assert cudnn_check.check_model(model, sample=post) == []
    assert [f.criterion for f in cudnn_check.check_model(model, sample=pre)] == [
        "mask_right_padded"]


# ----------------------------------------------------------------- when the probe cannot run
class _Unbuilt(keras.Model):
    def __init__(self):
        super().__init__()
        self.rnn = keras.layers.LSTM(3, unroll=True)

    def call(self, x):
        return self.rnn(x)


def test_probe_falls_back_to_static_reading_in_one_line():
    report = cudnn_check.check_model(_Unbuilt())
    assert report.probe.startswith("static reading (the probe could not run: ")
    assert "\n" not in report.probe
    assert [(f.criterion, f.source) for f in report] == [("unroll", "static")]
    # A model that cannot be called on its sample says so too.
    bad = cudnn_check.check_model(_masked_model(), sample=np.zeros((2, 5, 7)))
    assert bad.probe.startswith("static reading (the probe could not run: the model could not "
                                "be called on your sample"), bad.probe


def test_check_layer_sees_into_wrappers_and_reads_classes_by_their_base():
    bi = keras.layers.Bidirectional(keras.layers.GRU(3, reset_after=False))
    assert [f.criterion for f in cudnn_check.check_layer(bi)] == ["reset_after"] * 2

    class LSTM(keras.layers.RNN):  # a user class named LSTM, built on the generic RNN
        def __init__(self, units, **kwargs):
            super().__init__(keras.layers.LSTMCell(units), **kwargs)
    assert [f.criterion for f in cudnn_check.check_layer(LSTM(3))] == ["generic_rnn"]

    class Mine(tf_keras.layers.LSTM):  # judged by tf-keras's rules and verdict
        pass
    layer = Mine(3, unroll=True)
    assert not layer._could_use_gpu_kernel
    assert [f.criterion for f in cudnn_check.check_layer(layer)] == ["unroll"]


def test_dtype_policy_is_reported_from_tensorflows_op_definition():
    from tensorflow.python.framework import op_def_registry
    import tensorflow as tf
    (attr,) = [a for a in op_def_registry.get("CudnnRNNV3").attr if a.name == "T"]
    allowed = {tf.dtypes.as_dtype(t).name for t in attr.allowed_values.list.type}
    inp = keras.Input((4, 3))
    try:
        keras.config.set_dtype_policy("mixed_bfloat16")
        model = keras.Model(inp, keras.layers.LSTM(3)(inp))
    finally:
        keras.config.set_dtype_policy("float32")
    with pretend_gpu() as calls:
        model(np.zeros((2, 4, 3), "float32"))
    seen = calls.inputs[0].dtype.name  # what Keras hands the cuDNN op under this policy
    (note,) = cudnn_check.check_model(model).notes
    assert note.startswith("dtype policy mixed_bfloat16") and seen in note
    assert ("so it takes this dtype" in note) == (seen in allowed), (note, allowed)
    assert cudnn_check.check_model(_masked_model()).notes == []  # float32: nothing to say


# ----------------------------------------------------------------- PyTorch
class _Hidden(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 4, batch_first=True)
        self.plain = [nn.LSTM(3, 3)]  # not registered: .to() and state_dict() miss it

    def forward(self, x):
        return self.gru(x)[0]


def test_check_module_sees_scripted_traced_quantized_and_hidden_rnns():
    def found(module):
        return [(f.layer, f.criterion) for f in cudnn_check.check_module(module)]
    # Scripted and traced modules run the same ATen ops as eager ones.
    scripted = torch.jit.script(nn.LSTM(3, 4))
    assert found(scripted) == [("LSTM", "device")]
    traced = torch.jit.trace(_Hidden(), torch.zeros(2, 5, 3))
    assert "aten::gru" in str(traced.inlined_graph)
    assert found(traced) == [("gru", "device")]
    assert found(_Hidden()) == [("plain[0]", "unregistered"), ("gru", "device"),
                                ("plain[0]", "device")]
    assert "plain.0.weight_ih_l0" not in _Hidden().state_dict()
    # Dynamically quantized: it never calls aten::lstm, the op that dispatches to cuDNN; it
    # runs aten::quantized_lstm, a loop of cell steps on packed int8 weights.
    floating = nn.Sequential(nn.LSTM(3, 4))
    quantized = torch.ao.quantization.quantize_dynamic(floating, {nn.LSTM}, dtype=torch.qint8)
    for module, op in ((floating, "aten::lstm"), (quantized, "aten::quantized_lstm")):
        with torch.autograd.profiler.profile() as prof:
            module(torch.zeros(5, 2, 3))
        ops = {e.name for e in prof.function_events}
        assert op in ops and (module is floating) == ("aten::lstm" in ops), ops
    assert found(floating) == [("0", "device")]
    assert found(quantized) == [("0", "quantized")]
    # What it cannot look into, it says so.
    assert [f.criterion for f in cudnn_check.check_module(torch.jit.script(_identity))] == [
        "cannot_inspect"]


def _identity(x: torch.Tensor) -> torch.Tensor:
    return x


# ----------------------------------------------------------------- command line, Keras 2
CLI_KERAS2 = (  # run with TF_USE_LEGACY_KERAS=1, in the folder of k2_files
    "import io, contextlib, json\n"
    "import cudnn_check\n"
    "runs = [['k2.keras', '--json'], ['k2.h5', '--sample', 'post.npz', '--json'],"
    " ['k2.h5', '--sample', 'bad.npz']]\n"
    "for args in runs:\n"
    "    out, err = io.StringIO(), io.StringIO()\n"
    "    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
    "        rc = cudnn_check.main(args)\n"
    "    print(json.dumps([rc, out.getvalue(), err.getvalue()]))\n")


def test_cli_loads_tf_keras_files_and_takes_a_sample(judged):
    """Under TF_USE_LEGACY_KERAS=1 the command line loads tf-keras's .keras and .h5 files and
    reads a sample (the last job of the TensorFlow judges' process)."""
    proc = judged["cli_keras2"]
    lines = [json.loads(line) for line in proc.stdout.strip().splitlines()[-3:]]
    assert len(lines) == 3, proc.stderr[-3000:]
    (rc1, out1, _), (rc2, out2, _), (rc3, _, err3) = lines
    first, second = json.loads(out1), json.loads(out2)
    assert rc1 == 1 and first["legacy_keras"] and first["keras"] == tf_keras.__version__
    assert [(l["path"], l["verdict"]) for l in first["layers"]] == [
        ("k2/enc", "depends on the padding")]
    assert rc2 == 0 and second["probe"].endswith("on your sample, with a GPU pretended")
    assert rc3 == 2 and len(err3.strip().splitlines()) == 1 and "bad.npz" in err3


def test_use_cudnn_true_is_probed_past_the_recorder():
    """use_cudnn=True raises when the cuDNN call fails, as the recorder makes it: the probe
    counts the call Keras chose and finishes the model with the generic loop."""
    inp = keras.Input((5, 3))
    model = keras.Model(inp, keras.layers.LSTM(3, use_cudnn=True, name="strict")(inp), name="m")
    with pretend_gpu() as calls:
        with pytest.raises(ValueError, match="use_cudnn=True"):
            model(np.zeros((2, 5, 3), "float32"))
    assert calls == ["lstm"]
    report = cudnn_check.check_model(model)
    assert report.probe.startswith("asked") and report == []
    assert report.layers == [("m/strict", "LSTM", "uses cuDNN on a GPU")]


def test_checker_stays_one_file_that_imports_nothing_from_this_site():
    import ast
    tree = ast.parse(CHECKER.read_text(encoding="utf-8"))
    top = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
           for alias in node.names}
    top |= {node.module.split(".")[0] for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module}
    frameworks = {"keras", "tf_keras", "tensorflow", "jax", "torch", "numpy"}
    assert top - frameworks <= set(sys.stdlib_module_names), top - frameworks
    assert not any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(tree))
