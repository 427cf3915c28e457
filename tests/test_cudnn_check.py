"""snippets/cudnn_check.py: agreement with Keras 3's and tf-keras's own decisions, model
walking, masks, and the command line's answers to bad input."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO

sys.path.insert(0, str(REPO / "snippets"))
sys.path.insert(0, str(REPO / "snippets" / "criteria"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402  (Keras 2 objects; imported directly, no env variable needed)

import cudnn_check  # noqa: E402
from _pretend_gpu import pretend_gpu  # noqa: E402

CHECKER = REPO / "snippets" / "cudnn_check.py"
X = np.random.default_rng(0).normal(size=(2, 3, 2)).astype("float32")


def _config(draw, k3: bool):
    tanhs = ["tanh", tf.tanh, (lambda v: tf.tanh(v)), "relu", "sigmoid", None]
    sigmoids = ["sigmoid", tf.sigmoid, (lambda v: tf.sigmoid(v)), "hard_sigmoid", "tanh"]
    if k3:
        tanhs.append(keras.ops.tanh)
        sigmoids.append(keras.ops.sigmoid)
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
    if k3:
        cfg["use_cudnn"] = draw(st.sampled_from(["auto", "auto", False]))
    return kind, cfg


@st.composite
def keras3_configs(draw):
    return _config(draw, True)


@st.composite
def keras2_configs(draw):
    return _config(draw, False)


@settings(max_examples=500, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(keras3_configs(), st.booleans())
def test_agrees_with_keras3_own_decision(config, training):
    """Keras 3 decides in LSTM/GRU.inner_loop + backend cudnn_ok: run that code with a GPU
    pretended and record whether it reached the cuDNN kernel."""
    kind, cfg = config
    layer = (keras.layers.LSTM if kind == "lstm" else keras.layers.GRU)(3, **cfg)
    with pretend_gpu() as calls:
        layer(X, training=training)
    keras_says = bool(calls)
    findings = cudnn_check.check_layer(layer)
    assert (findings == []) == keras_says, (cfg, findings)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(keras2_configs())
def test_agrees_with_tf_keras_could_use_gpu_kernel(config):
    kind, cfg = config
    layer = (tf_keras.layers.LSTM if kind == "lstm" else tf_keras.layers.GRU)(3, **cfg)
    findings = cudnn_check.check_layer(layer)
    assert (findings == []) == layer._could_use_gpu_kernel, (cfg, findings)


def test_findings_name_each_broken_criterion():
    layer = keras.layers.GRU(4, activation="relu", recurrent_dropout=0.1, unroll=True,
                             use_bias=False, reset_after=False, use_cudnn=False)
    found = cudnn_check.check_layer(layer)
    assert [f.criterion for f in found] == [
        "activation", "recurrent_dropout", "unroll", "use_bias", "reset_after", "use_cudnn"]
    assert all(f.message and f.fix and f.layer == layer.name for f in found)
    assert cudnn_check.check_layer(keras.layers.LSTM(4, dropout=0.5)) == []  # Keras >= 3.4
    assert cudnn_check.check_layer(keras.layers.Dense(3)) == []
    rnn = cudnn_check.check_layer(keras.layers.RNN(keras.layers.GRUCell(3)))
    assert [f.criterion for f in rnn] == ["generic_rnn"]


def test_check_model_walks_wrappers_and_nested_models_with_paths():
    inner = keras.Sequential([keras.Input((4, 4)), keras.layers.GRU(3, reset_after=False,
                                                                     name="g")], name="inner")
    inputs = keras.Input((4, 5, 3))
    x = keras.layers.TimeDistributed(keras.layers.GRU(2, unroll=True, name="tg"),
                                     name="td")(inputs)
    y = keras.layers.Bidirectional(keras.layers.LSTM(2, recurrent_dropout=0.1, name="l",
                                                     return_sequences=True), name="bi")(x)
    z = inner(y)
    outer = keras.Model(inputs, z, name="outer")
    found = cudnn_check.check_model(outer)
    got = sorted((f.layer, f.criterion) for f in found)
    assert got == [("outer/bi/backward_l", "recurrent_dropout"),
                   ("outer/bi/forward_l", "recurrent_dropout"),
                   ("outer/inner/g", "reset_after"), ("outer/td/tg", "unroll")], got
    assert cudnn_check.check_model(keras.Sequential([keras.Input((5, 4)),
                                                     keras.layers.LSTM(2)])) == []


def test_check_model_on_tf_keras_models():
    m = tf_keras.Sequential([tf_keras.layers.Bidirectional(
        tf_keras.layers.LSTM(2, unroll=True, return_sequences=True), input_shape=(5, 4)),
        tf_keras.layers.GRU(2)])
    got = sorted(f.criterion for f in cudnn_check.check_model(m))
    assert got == ["unroll", "unroll"]


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


# ----------------------------------------------------------------------------- CLI
def cli(*args, cwd=None):
    return subprocess.run([sys.executable, str(CHECKER), *map(str, args)], capture_output=True,
                          text=True, timeout=120, cwd=cwd,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})


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
    for name, m in [("good", good), ("bad", bad), ("plain", plain)]:
        m.save(d / f"{name}.keras")
    return d


def test_cli_bad_input_one_line_exit_2(tmp_path):
    assert_one_line_error(cli(tmp_path / "missing.keras"), "no such file")
    (tmp_path / "text.keras").write_text("hello")
    assert_one_line_error(cli(tmp_path / "text.keras"), "not a .keras archive")
    (tmp_path / "old.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 64)
    assert_one_line_error(cli(tmp_path / "old.h5"), "legacy HDF5")
    with zipfile.ZipFile(tmp_path / "other.keras", "w") as z:
        z.writestr("readme.txt", "not a model")
    assert_one_line_error(cli(tmp_path / "other.keras"), "no config.json")
    assert_one_line_error(cli("--nope", tmp_path / "x"), "usage error")
    assert_one_line_error(cli(tmp_path), "directory")


def test_cli_corrupt_archive(saved, tmp_path):
    data = (saved / "good.keras").read_bytes()
    broken = tmp_path / "broken.keras"
    raw = bytearray(data)
    start = raw.find(b"config.json") + 40  # damage compressed data after the name
    raw[start:start + 200] = b"\xff" * 200
    broken.write_bytes(bytes(raw))
    assert_one_line_error(cli(broken), str(broken))


def test_cli_reports_and_exit_codes(saved):
    good = cli(saved / "good.keras")
    assert good.returncode == 0 and "fast (LSTM): uses cuDNN on a GPU" in good.stdout, good
    bad = cli(saved / "bad.keras", "--json")
    assert bad.returncode == 1, bad
    report = json.loads(bad.stdout)
    assert {f["layer"] for f in report["findings"]} == {"m/bi/forward_slow", "m/bi/backward_slow"}
    assert {f["criterion"] for f in report["findings"]} == {"recurrent_dropout"}
    assert [l["eligible"] for l in report["layers"]] == [False, False]
    plain = cli(saved / "plain.keras")
    assert plain.returncode == 0 and "no LSTM or GRU layer found" in plain.stdout, plain
