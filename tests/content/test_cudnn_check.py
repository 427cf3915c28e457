"""snippets/cudnn_check.py: agreement with each Keras 3 backend's own decision and with tf-keras's
verdict, model walking, masks, PyTorch modules, what it imports, and the command line's answers
to bad input."""
from __future__ import annotations

import json
import os
import sys
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO, checker_here

sys.path.insert(0, str(REPO / "snippets"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402  (the TensorFlow backend: this process does not set KERAS_BACKEND)
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402  (Keras 2 objects; imported directly, no env variable needed)
import torch  # noqa: E402
from torch import nn  # noqa: E402

import cudnn_check  # noqa: E402

sys.path.insert(0, str(REPO / "tests"))
import framework_batch  # noqa: E402  (tests/: one process per backend for the programs below)
import keras3_witness  # noqa: E402  (tests/: Keras's own choice, below the checker's probe)

CHECKER = REPO / "snippets" / "cudnn_check.py"
AGREEMENT = REPO / "tests" / "agreement_keras3.py"


# ----------------------------------------------------------------- one process per backend
# The programs below that need a fresh Keras (another backend, the command line as a reader runs
# it) run in one process per backend (tests/framework_batch.py), all three at once: each
# backend is imported once for all of them. A job whose check needs a fresh process (what it
# imports, its start-up output on stderr) comes first in its process.
JAX_AND_TORCH_CODE = (
    "import sys; sys.path.insert(0, 'snippets'); import keras, cudnn_check\n"
    "m = keras.Sequential([keras.Input((5, 3)), keras.layers.LSTM(4), keras.layers.Dense(1)])\n"
    "f = cudnn_check.check_model(m) + cudnn_check.check_layer(keras.layers.GRU(4))\n"
    "f += cudnn_check.check_mask([[True, False]])\n"
    "print([x.criterion for x in f], 'tensorflow' in sys.modules)")
TORCH_MODULE_CODE = (
    "import sys; sys.path.insert(0, 'snippets'); import torch, cudnn_check\n"
    "f = cudnn_check.check_module(torch.nn.LSTM(3, 4))\n"
    "print([x.criterion for x in f], 'tensorflow' in sys.modules, 'keras' in sys.modules)")
AGREEMENT_JOB = {"argv": [AGREEMENT, "--configs", 500, "--masks", 60], "cwd": REPO}


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory):
    """Files the command line must refuse in one line, by name."""
    d = tmp_path_factory.mktemp("bad")
    (d / "text.keras").write_text("hello")
    (d / "old.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 64)
    with zipfile.ZipFile(d / "other.keras", "w") as z:
        z.writestr("readme.txt", "not a model")
    return {"old.h5": [d / "old.h5"],  # first: the one that imports Keras, quietly or not
            "missing": [d / "missing.keras"], "text": [d / "text.keras"],
            "other": [d / "other.keras"], "usage": ["--nope", d / "x"], "directory": [d]}


@pytest.fixture(scope="module")
def runs(saved, bad_inputs):
    """{backend: {job name: CompletedProcess}} for every program of this module that needs a
    process of its own."""
    cli_jobs = {f"cli {name}": {"argv": [CHECKER, *args]} for name, args in bad_inputs.items()}
    cli_jobs.update({"cli bad.keras": {"argv": [CHECKER, saved / "bad.keras"]},
                     "cli good.keras": {"argv": [CHECKER, saved / "good.keras"]}})
    batches = {
        "tensorflow": {**cli_jobs, "agreement": AGREEMENT_JOB,
                       "eager rule": {"code": EAGER_RULE_CODE, "cwd": REPO,
                                      "env": {"TF_USE_LEGACY_KERAS": "1"}}},
        "jax": {"keras code": {"code": JAX_AND_TORCH_CODE, "cwd": REPO},
                "cli gru.keras --json": {"argv": [CHECKER, saved / "gru.keras", "--json"]},
                "agreement": AGREEMENT_JOB},
        "torch": {"module code": {"code": TORCH_MODULE_CODE, "cwd": REPO},
                  "keras code": {"code": JAX_AND_TORCH_CODE, "cwd": REPO},
                  "agreement": AGREEMENT_JOB}}
    waiting = {backend: framework_batch.run(list(jobs.values()), background=True, env={
        "KERAS_BACKEND": backend, "TF_CPP_MIN_LOG_LEVEL": "3"}) for backend, jobs in batches.items()}
    return {backend: dict(zip(batches[backend], wait())) for backend, wait in waiting.items()}


# ----------------------------------------------------------------- agreement, Keras 3 backends
@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_agrees_with_each_keras3_backend_own_decision(runs, backend):
    """500 generated layers and 60 masks per backend, each run through Keras's unchanged code
    with a GPU pretended in the framework (tests/agreement_keras3.py with tests/keras3_witness.py,
    in the backend's own process), against the checker's rules; and a planted wrong rule is
    caught."""
    proc = runs[backend]["agreement"]
    assert proc.stdout.strip(), proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["backend"] == backend
    assert report["configs"] >= 500 and report["masks"] >= 60
    assert report["mismatches"] == [], json.dumps(report["mismatches"][:5], indent=1)
    # Keras sent some layers to cuDNN and not others, so the comparison can fail either way
    # (a backend that never reached cuDNN would agree with a checker that always says no).
    assert 0 < report["eligible_layers"] < report["configs"], report
    if backend == "tensorflow":  # right-padded masks reach cuDNN, the others do not
        assert 0 < report["eligible_masks"] < report["masks"], report
    else:  # any mask means the generic loop
        assert report["eligible_masks"] == 0, report
    # A checker with a planted wrong rule (a layer rule, a mask rule) disagrees on some cases.
    assert report["planted"] and all(n > 0 for n in report["planted"].values()), report["planted"]
    assert proc.returncode == 0, proc.stderr[-3000:]


# ----------------------------------------------------------------- agreement, tf-keras
def _keras2_config(draw):
    tanhs = ["tanh", tf.tanh, (lambda v: tf.tanh(v)), "relu", "sigmoid", None]
    sigmoids = ["sigmoid", tf.sigmoid, (lambda v: tf.sigmoid(v)), "hard_sigmoid", "tanh"]
    kind = draw(st.sampled_from(["lstm", "gru"]))
    cfg = dict(
        activation=draw(st.sampled_from(tanhs)),
        recurrent_activation=draw(st.sampled_from(sigmoids)),
        dropout=draw(st.sampled_from([0.0, 0.3])),
        recurrent_dropout=draw(st.sampled_from([0.0, 0.0, 0.25])),
        unroll=draw(st.booleans()),
        use_bias=draw(st.booleans()),
        go_backwards=draw(st.booleans()),
        stateful=draw(st.booleans()),
        return_sequences=draw(st.booleans()),
        return_state=draw(st.booleans()),
    )
    if kind == "gru":
        cfg["reset_after"] = draw(st.booleans())
    return kind, cfg


@settings(max_examples=500, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.composite(_keras2_config)())
def test_explains_tf_keras_verdict(config):
    """The checker uses tf-keras's own verdict (`_could_use_gpu_kernel`); its explanation, the
    criteria it re-derives, must be empty exactly when that verdict is True. (check_layer passes
    the verdict through, so comparing it with the verdict would prove nothing; the judge in
    tests/judge_keras.py compares it with the calls tf-keras makes.)"""
    kind, cfg = config
    layer = (tf_keras.layers.LSTM if kind == "lstm" else tf_keras.layers.GRU)(3, **cfg)
    reasons = cudnn_check._keras2_reasons(layer, kind)
    assert (reasons == []) == layer._could_use_gpu_kernel, (cfg, reasons)


def _graph_cudnn_ops(layer):
    graph = tf.function(layer).get_concrete_function(tf.zeros((2, 4, 3))).graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    return {n.op for n in nodes if n.op.startswith("Cudnn")}


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.composite(_keras2_config)())
def test_tf_keras_verdict_is_what_its_graph_does(config):
    """And the criteria the checker re-derives are what tf-keras does: its traced graph holds a
    cuDNN candidate exactly for the layers that break none of them."""
    kind, cfg = config
    cfg["stateful"] = False  # a stateful layer needs a fixed batch size to be traced
    layer = (tf_keras.layers.LSTM if kind == "lstm" else tf_keras.layers.GRU)(3, **cfg)
    reasons = cudnn_check._keras2_reasons(layer, kind)
    assert bool(_graph_cudnn_ops(layer)) == (reasons == []), (cfg, reasons)


EAGER_RULE_CODE = (
    "import os, sys; sys.path.insert(0, 'snippets'); os.environ['TF_USE_LEGACY_KERAS']='1'\n"
    "import tensorflow as tf, cudnn_check\n"
    "tf.compat.v1.disable_eager_execution()\n"
    "print([f.criterion for f in cudnn_check.check_layer(tf.keras.layers.LSTM(3))])")


def test_tf_keras_eager_rule(runs):
    """tf-keras in graph mode (tf.compat.v1): the last job of the TensorFlow process, as graph
    mode stays on once set."""
    proc = runs["tensorflow"]["eager rule"]
    assert proc.stdout.strip().splitlines()[-1] == "['eager']", proc.stderr[-2000:]


# ----------------------------------------------------------------- findings
def test_findings_name_each_broken_criterion():
    layer = keras.layers.GRU(4, activation="relu", recurrent_dropout=0.1, unroll=True,
                             use_bias=False, reset_after=False, use_cudnn=False)
    found = cudnn_check.check_layer(layer)
    assert [f.criterion for f in found] == [
        "use_cudnn", "recurrent_dropout", "activation", "unroll", "use_bias", "reset_after"]
    assert all(f.message and f.fix and f.layer == layer.name for f in found)
    assert cudnn_check.check_layer(keras.layers.LSTM(4, dropout=0.5)) == []  # Keras >= 3.4
    assert cudnn_check.check_layer(keras.layers.Dense(3)) == []


def test_use_cudnn_is_read_as_keras_reads_it():
    """Keras tests `use_cudnn in ("auto", True)`: 0 acts as False and 1 as True."""
    assert [f.criterion for f in cudnn_check.check_layer(keras.layers.LSTM(4, use_cudnn=0))] == [
        "use_cudnn"]
    assert cudnn_check.check_layer(keras.layers.LSTM(4, use_cudnn=1)) == []
    with pytest.raises(ValueError):  # what Keras itself refuses, the checker never sees
        keras.layers.LSTM(4, use_cudnn="yes")


def test_old_defaults_point_to_the_legacy_page():
    """Each old default names the releases that had it (keras tags 2.1.5 to 2.3.1 and TF 1.x's
    tf.keras for reset_after=False; hard_sigmoid until 2.2.5), as the legacy page's table does."""
    releases = {"recurrent_activation": "Keras 2.2 or older and tf.keras in TensorFlow 1.x",
                "reset_after": "Keras 2.1.5 to 2.3.1 and tf.keras in TensorFlow 1.x"}
    for layer in (keras.layers.LSTM(4, recurrent_activation="hard_sigmoid"),
                  keras.layers.GRU(4, reset_after=False),
                  tf_keras.layers.GRU(4, reset_after=False),
                  tf_keras.layers.LSTM(4, recurrent_activation="hard_sigmoid")):
        (f,) = cudnn_check.check_layer(layer)
        assert f.see == cudnn_check.SITE + "legacy/#old-defaults", f
        assert releases[f.criterion] in f.message and f.see in str(f)
    legacy = (REPO / "docs" / "legacy.md").read_text(encoding="utf-8")
    assert "2.1.5" in legacy and "2.3.1" in legacy


def test_site_url_matches_mkdocs():
    import yaml
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8").replace("!!", "#"))
    assert cudnn_check.SITE == config["site_url"]


# ----------------------------------------------------------------- walking models
class _Wrapper(keras.layers.Layer):
    """A custom layer that holds an LSTM, a list with a GRU, and a loose cell."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.encoder = keras.layers.LSTM(3, unroll=True, return_sequences=True, name="enc")
        self.blocks = [keras.layers.GRU(3, name="blk")]
        self.step = keras.layers.LSTMCell(3, name="step")

    def call(self, x):
        return self.blocks[0](self.encoder(x))


def test_check_model_walks_wrappers_nested_models_and_custom_layers():
    inner = keras.Sequential([keras.Input((4, 4)), keras.layers.GRU(3, reset_after=False,
                                                                     name="g")], name="inner")
    inputs = keras.Input((4, 5, 3))
    x = keras.layers.TimeDistributed(keras.layers.GRU(2, unroll=True, name="tg"),
                                     name="td")(inputs)
    y = keras.layers.Bidirectional(keras.layers.LSTM(2, recurrent_dropout=0.1, name="l",
                                                     return_sequences=True), name="bi")(x)
    z = inner(y)
    stacked = keras.layers.RNN([keras.layers.LSTMCell(3), keras.layers.GRUCell(3)],
                               return_sequences=True, name="stacked")(z[:, None, :])
    w = _Wrapper(name="custom")(stacked)
    outer = keras.Model(inputs, w, name="outer")
    got = sorted((f.layer, f.criterion) for f in cudnn_check.check_model(outer))
    assert got == [("outer/bi/backward_l", "recurrent_dropout"),
                   ("outer/bi/forward_l", "recurrent_dropout"),
                   ("outer/custom/enc", "unroll"), ("outer/custom/step", "cell_loop"),
                   ("outer/inner/g", "reset_after"), ("outer/stacked", "generic_rnn"),
                   ("outer/td/tg", "unroll")], got
    paths = [p for p, _ in cudnn_check.rnn_layers(outer)]
    assert "outer/custom/blk" in paths and len(paths) == len(set(paths))
    assert cudnn_check.check_model(keras.Sequential([keras.Input((5, 4)),
                                                     keras.layers.LSTM(2)])) == []


def test_shared_layer_is_reported_once():
    shared = keras.layers.LSTM(2, unroll=True, name="shared")
    a, b = keras.Input((3, 2)), keras.Input((3, 2))
    model = keras.Model([a, b], [shared(a), shared(b)])
    assert [(f.layer, f.criterion) for f in cudnn_check.check_model(model)] == [
        (f"{model.name}/shared", "unroll")]


def test_every_other_keras_rnn_layer_is_named_with_what_to_use():
    """A layer of each kind Keras never runs on cuDNN (its own decision: no cuDNN op is called,
    with a GPU pretended in TensorFlow) gets one finding from its arguments alone, naming the
    kind and a layer with a cuDNN path to use instead."""
    L = keras.layers
    cases = [("simple_rnn", L.SimpleRNN(3, name="s"), (5, 3)),
             ("conv_rnn", L.ConvLSTM1D(2, 2, name="c"), (3, 4, 2)),
             ("conv_rnn", L.ConvLSTM3D(2, 2, name="c3"), (2, 3, 3, 3, 1)),
             ("generic_rnn", L.RNN(L.StackedRNNCells([L.SimpleRNNCell(3), L.GRUCell(3)])),
              (5, 3)),
             ("generic_rnn", L.RNN(L.SimpleRNNCell(3)), (5, 3))]
    for criterion, layer, shape in cases:
        x = np.zeros((2,) + shape, "float32")
        assert keras3_witness.cudnn_directions(layer, x) == 0, layer.name  # Keras's choice
        found = cudnn_check.check_layer(layer)
        assert [f.criterion for f in found] == [criterion], found
        assert "LSTM" in found[0].fix and found[0].layer == layer.name, found[0]
        assert cudnn_check.check_model(layer, probe=False).layers == [
            (layer.name, type(layer).__name__, "static: never uses cuDNN")]
    # A cell of any kind, on its own, is one time step per call.
    for cell in (L.SimpleRNNCell(3), L.GRUCell(3), L.StackedRNNCells([L.LSTMCell(3)])):
        assert [f.criterion for f in cudnn_check.check_layer(cell)] == ["cell_loop"]
    # The layers that can take cuDNN, as a control: the same witness sees them do it.
    for layer in (L.LSTM(3), L.GRU(3)):
        assert keras3_witness.cudnn_directions(layer, np.zeros((2, 5, 3), "float32")) == 1
        assert cudnn_check.check_layer(layer) == []


def test_check_model_on_tf_keras_models():
    m = tf_keras.Sequential([tf_keras.layers.Bidirectional(
        tf_keras.layers.LSTM(2, unroll=True, return_sequences=True), input_shape=(5, 4)),
        tf_keras.layers.GRU(2)])
    got = sorted(f.criterion for f in cudnn_check.check_model(m))
    assert got == ["unroll", "unroll"]


def test_jax_and_torch_backends_import_no_tensorflow(runs):
    """Checking a Keras 3 model on JAX or PyTorch never imports TensorFlow; a PyTorch module
    needs neither TensorFlow nor Keras. (They run first in their backend's process: on PyTorch
    the module's check, then the model's.)"""
    jax = runs["jax"]["keras code"].stdout.strip().splitlines()
    assert jax[-1] == "['jax_gru', 'mask'] False", (jax, runs["jax"]["keras code"].stderr[-2000:])
    torch_ = runs["torch"]["keras code"].stdout.strip().splitlines()
    assert torch_[-1] == "['mask'] False", torch_
    module = runs["torch"]["module code"]
    assert module.stdout.strip().splitlines()[-1] == "['device'] False False", module.stderr


# ----------------------------------------------------------------- masks
def test_check_mask():
    assert cudnn_check.check_mask([[True, True, False], [True, False, False]]) == []
    assert [f.criterion for f in cudnn_check.check_mask([[False, True, True]])] == [
        "mask_right_padded"]
    assert [f.criterion for f in cudnn_check.check_mask([[True, False, True]])] == [
        "mask_right_padded"]
    assert [f.criterion for f in cudnn_check.check_mask([[True, True], [False, False]])] == [
        "mask_fully_masked"]
    post = keras.utils.pad_sequences([[1, 2, 3], [4]], padding="post")
    pre = keras.utils.pad_sequences([[1, 2, 3], [4]])
    assert cudnn_check.check_mask(post, padding_value=0) == []
    assert cudnn_check.check_mask(pre, padding_value=0)[0].criterion == "mask_right_padded"
    batch = np.zeros((2, 3, 4))
    batch[0, :2] = 1.0
    batch[1, :] = 1.0
    assert cudnn_check.check_mask(batch, padding_value=0.0) == []
    for backend in ("jax", "torch"):  # any mask at all
        assert [f.criterion for f in cudnn_check.check_mask(post, 0, backend=backend)] == ["mask"]
    assert cudnn_check.check_mask(post, 0, backend="tf_keras") == []
    with pytest.raises(ValueError, match="shape"):
        cudnn_check.check_mask(np.zeros((2, 3, 4)))


def test_check_mask_agrees_with_keras_assertion():
    """Keras's own _assert_valid_mask accepts exactly the masks check_mask accepts."""
    import importlib
    tf_rnn = importlib.import_module("keras.src.backend.tensorflow.rnn")
    rng = np.random.default_rng(1)
    for _ in range(60):
        mask = rng.random((3, 4)) < rng.random()
        if rng.random() < 0.5:  # also many right-padded ones
            mask = np.arange(4)[None, :] < rng.integers(0, 5, size=(3, 1))
        try:
            tf_rnn._assert_valid_mask(tf.constant(mask))
            keras_ok = True
        except tf.errors.InvalidArgumentError:
            keras_ok = False
        assert (cudnn_check.check_mask(mask) == []) == keras_ok, mask


# ----------------------------------------------------------------- PyTorch modules
class _Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.LSTM(8, 16, num_layers=2, bidirectional=True, proj_size=4)
        self.decoder = nn.GRUCell(8, 16)
        self.head = nn.Linear(16, 2)
        self.extra = nn.ModuleList([nn.RNN(8, 8, nonlinearity="relu"), nn.LSTMCell(8, 8)])


def test_check_module_finds_every_rnn_and_cell():
    found = sorted((f.layer, f.criterion) for f in cudnn_check.check_module(_Seq2Seq()))
    assert found == [("decoder", "cell_loop"), ("encoder", "device"), ("extra.0", "device"),
                     ("extra.1", "cell_loop")], found
    assert [f.criterion for f in cudnn_check.check_module(nn.Linear(3, 3))] == []
    top = cudnn_check.check_module(nn.GRU(3, 3))
    assert [(f.layer, f.criterion) for f in top] == [("GRU", "device")]


def test_check_module_dtypes_and_flags():
    def criteria(module):
        return [f.criterion for f in cudnn_check.check_module(module)]
    assert criteria(nn.LSTM(3, 4).double()) == ["device"]
    assert criteria(nn.LSTM(3, 4).half()) == ["device"]
    assert criteria(nn.LSTM(3, 4).to(torch.bfloat16)) == ["device", "dtype"]
    with torch.backends.cudnn.flags(enabled=False):
        assert criteria(nn.GRU(3, 4)) == ["device", "cudnn_disabled"]
    # The dtypes the checker accepts are PyTorch's own list for cuDNN.
    assert set(torch.backends.cudnn.CUDNN_TENSOR_DTYPES) == {
        torch.float16, torch.float32, torch.float64}


# ----------------------------------------------------------------------------- CLI
def test_checker_here_answers_as_the_command_line(saved, runs):
    """checker_here (the command line's main() in this process, which runs Keras on
    TensorFlow) is a faithful stand-in for the program run as a reader runs it: the same output
    and exit status on the same saved model. The tests that need `python cudnn_check.py` itself
    (another backend, bad input, its exit status) take it from `runs`: the script run as
    __main__, in a process of its backend's own."""
    assert keras.backend.backend() == "tensorflow" and not cudnn_check._legacy_keras()
    here, there = checker_here(saved / "bad.keras"), runs["tensorflow"]["cli bad.keras"]
    assert (here.returncode, here.stdout) == (there.returncode, there.stdout), (here, there)
    assert here.returncode == 1 and "recurrent_dropout" in here.stdout


def assert_one_line_error(result, *words):
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for w in words:
        assert w in lines[0], lines[0]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    good = keras.Sequential([keras.Input((5, 3)), keras.layers.LSTM(4, name="fast")])
    bad = keras.Sequential([keras.Input((5, 3)), keras.layers.Bidirectional(
        keras.layers.GRU(4, recurrent_dropout=0.2, name="slow"), name="bi")], name="m")
    plain = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    gru = keras.Sequential([keras.Input((5, 3)), keras.layers.GRU(4, name="g")], name="gm")
    inp = keras.Input((5, 3))
    mixed = keras.Model(inp, [keras.layers.SimpleRNN(4, name="simple")(inp),
                              keras.layers.LSTM(4, name="fast")(inp)], name="mixed")
    for name, m in [("good", good), ("bad", bad), ("plain", plain), ("gru", gru),
                    ("mixed", mixed)]:
        m.save(d / f"{name}.keras")
    return d


def test_cli_bad_input_one_line_exit_2(runs):
    cli = runs["tensorflow"]
    assert_one_line_error(cli["cli missing"], "no such file")
    assert_one_line_error(cli["cli text"], "not a .keras archive")
    assert_one_line_error(cli["cli old.h5"], "legacy HDF5")  # its process's first job
    assert_one_line_error(cli["cli other"], "no config.json")
    assert_one_line_error(cli["cli usage"], "usage error")
    assert_one_line_error(cli["cli directory"], "directory")


def test_cli_corrupt_archive(saved, tmp_path):
    data = (saved / "good.keras").read_bytes()
    broken = tmp_path / "broken.keras"
    raw = bytearray(data)
    start = raw.find(b"config.json") + 40  # damage compressed data after the name
    raw[start:start + 200] = b"\xff" * 200
    broken.write_bytes(bytes(raw))
    assert_one_line_error(checker_here(broken), str(broken))


def test_cli_reports_and_exit_codes(saved, runs):
    good = runs["tensorflow"]["cli good.keras"]
    assert good.returncode == 0 and "fast (LSTM): uses cuDNN on a GPU" in good.stdout, good
    assert "tensorflow backend" in good.stdout
    bad = checker_here(saved / "bad.keras", "--json")
    assert bad.returncode == 1, bad
    report = json.loads(bad.stdout)
    assert {f["layer"] for f in report["findings"]} == {"m/bi/forward_slow", "m/bi/backward_slow"}
    assert {f["criterion"] for f in report["findings"]} == {"recurrent_dropout"}
    assert [l["eligible"] for l in report["layers"]] == [False, False]
    assert report["backend"] == "tensorflow"
    plain = checker_here(saved / "plain.keras")
    assert plain.returncode == 0 and "no LSTM or GRU layer found" in plain.stdout, plain


def test_cli_names_a_layer_that_never_uses_cudnn(saved):
    """A SimpleRNN beside an LSTM: Keras sends the LSTM alone to cuDNN (one direction, seen by
    the witness), so the model is not all eligible, and the report says which layer and what
    to use."""
    model = keras.saving.load_model(saved / "mixed.keras")
    assert keras3_witness.cudnn_directions(model, np.zeros((2, 5, 3), "float32")) == 1
    text = checker_here(saved / "mixed.keras")
    assert text.returncode == 1, text
    assert "mixed/simple (SimpleRNN): never uses cuDNN" in text.stdout, text.stdout
    assert "mixed/fast (LSTM): uses cuDNN on a GPU" in text.stdout
    assert "[simple_rnn]" in text.stdout and "fix: Where GPU speed matters, use keras.layers." \
        "LSTM or GRU" in text.stdout, text.stdout
    report = json.loads(checker_here(saved / "mixed.keras", "--json").stdout)
    assert {l["path"]: l["eligible"] for l in report["layers"]} == {
        "mixed/simple": False, "mixed/fast": True}


def test_cli_follows_the_backend(saved, runs):
    """The same saved GRU: eligible on TensorFlow, never on JAX."""
    assert checker_here(saved / "gru.keras").returncode == 0
    jax = runs["jax"]["cli gru.keras --json"]
    assert jax.returncode == 1, jax.stderr
    report = json.loads(jax.stdout)
    assert report["backend"] == "jax"
    assert [f["criterion"] for f in report["findings"]] == ["jax_gru"]
