"""The "Old code and old weights" page (docs/legacy.md, legacy.es.md): every quoted message is
what the installed libraries raise, the facts it states hold for the installed packages, the
CuDNN weight conversion matches NVIDIA's equations on every Keras 3 backend, and the checker
flags loaded models that carry the old defaults."""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import yaml

from conftest import REPO, checker_here, printed

SNIPPETS = REPO / "snippets"
LEGACY = SNIPPETS / "legacy"
sys.path.insert(0, str(SNIPPETS))
sys.path.insert(0, str(LEGACY))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402  (Keras 3, TensorFlow backend in this process)
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402  (Keras 2 objects; imported directly, no env variable needed)
from tf_keras.src.saving.legacy import hdf5_format  # noqa: E402

import cudnn_weights  # noqa: E402
from cudnn_check import check_model  # noqa: E402

PAGES = {lang: (REPO / "docs" / name).read_text(encoding="utf-8")
         for lang, name in (("en", "legacy.md"), ("es", "legacy.es.md"))}
MESSAGES = REPO / "data" / "messages.yml"  # the messages pages quote (<!-- message: ID -->)
MARKER = re.compile(r"<!-- message: ([\w-]+) -->")
# What tf.compat.v1.keras.layers and tf.keras.layers are with TF_USE_LEGACY_KERAS=1:
K1 = importlib.import_module("tf_keras.api._v1.keras.layers")
K2 = importlib.import_module("tf_keras.api._v2.keras.layers")


def quoted(name: str) -> str:
    return yaml.safe_load(MESSAGES.read_text(encoding="utf-8"))[name]["text"].strip()


def raised(call) -> str:
    """'ExceptionType: message' of what `call` raises (fails the test if nothing is raised)."""
    try:
        call()
    except Exception as err:  # noqa: BLE001  (the type is part of what is compared)
        return f"{type(err).__name__}: {err}"
    pytest.fail("expected an exception")


# ------------------------------------------------------------------ the quoted messages
CHECKED = {"keras3-attribute", "keras3-import", "keras3-tf-keras", "tf-keras",
           "keras3-unknown-layer", "keras3-time-major", "keras3-shape-mismatch", "tf-keras-gru",
           "cudnn-double-bias"}


def test_every_quoted_message_is_checked_and_on_both_pages():
    found = set(yaml.safe_load(MESSAGES.read_text(encoding="utf-8")))
    assert CHECKED <= found, CHECKED - found
    for lang, page in PAGES.items():
        used = set(MARKER.findall(page))
        assert used == CHECKED, (lang, used ^ CHECKED)


def test_keras3_has_no_cudnn_layers_messages():
    assert raised(lambda: keras.layers.CuDNNLSTM) == quoted("keras3-attribute")

    def from_import():
        exec("from keras.layers import CuDNNLSTM", {})

    root = str(Path(keras.layers.__file__).parents[2])  # the folder keras is installed in
    assert raised(from_import).replace(root, "...") == quoted("keras3-import")


def test_tf_keras_messages_with_and_without_legacy_keras():
    """The snippet runs both Keras versions in child processes; its output, the one the page
    shows (from the snippets' cache, run now if not cached), must hold the quoted messages,
    each under the right Keras."""
    keras3, _, keras2 = printed("legacy/import_errors.py").partition("TF_USE_LEGACY_KERAS=1")
    assert f"tf.keras.layers.CuDNNLSTM: {quoted('keras3-tf-keras')}" in keras3, keras3
    assert f"tf.keras.layers.CuDNNLSTM: {quoted('tf-keras')}" in keras2, keras2
    assert f"keras.layers.CuDNNLSTM: {quoted('keras3-attribute')}" in keras2  # Keras 3 package
    assert "tf.compat.v1.keras.layers.CuDNNLSTM: exists" in keras2
    assert "tf.compat.v1.keras.layers.CuDNNLSTM: AttributeError" in keras3
    # without the variable, tf.compat.v1.keras is Keras 3 too, and has no CuDNNGRU either
    assert "tf.compat.v1.keras.layers.CuDNNGRU: AttributeError" in keras3


def test_keras3_cannot_load_a_model_with_cudnnlstm(tmp_path):
    path = str(tmp_path / "m.h5")
    tf_keras.Sequential([tf_keras.Input((5, 3)), K1.CuDNNLSTM(4)]).save(path)
    assert raised(lambda: keras.saving.load_model(path)) == quoted("keras3-unknown-layer")


def test_keras3_cannot_load_a_tf_keras_lstm_or_gru_h5(tmp_path):
    path = str(tmp_path / "m.h5")
    tf_keras.Sequential([tf_keras.Input((5, 3)), tf_keras.layers.LSTM(4)]).save(path)
    assert raised(lambda: keras.saving.load_model(path)) == quoted("keras3-time-major")
    tf_keras.Sequential([tf_keras.Input((5, 3)), tf_keras.layers.GRU(4)]).save(path)
    gru_message = quoted("keras3-time-major").replace("LSTM", "GRU")
    assert raised(lambda: keras.saving.load_model(path)) == gru_message


def _cudnn_weights_file(path: str, layer) -> list[np.ndarray]:
    model = tf_keras.Sequential([tf_keras.Input((7, 5)), layer])
    rng = np.random.default_rng(3)
    model.set_weights([rng.normal(size=w.shape).astype("float32") for w in model.get_weights()])
    model.save_weights(path)
    return model.get_weights()


def test_keras3_load_weights_does_not_convert(tmp_path):
    path = str(tmp_path / "w.h5")
    _cudnn_weights_file(path, K1.CuDNNLSTM(4, name="rnn"))
    k3 = keras.Sequential([keras.Input((7, 5)), keras.layers.LSTM(4, name="rnn")], name="model")
    assert raised(lambda: k3.load_weights(path)) == quoted("keras3-shape-mismatch")
    # nothing in Keras 3's saving code knows CuDNN layers
    root = Path(keras.__file__).parent / "src"
    for folder in (root / "saving", root / "legacy" / "saving"):
        for file in folder.glob("*.py"):
            assert "cudnn" not in file.read_text(encoding="utf-8").lower(), file


def test_tf_keras_refuses_cudnngru_weights_for_reset_after_false(tmp_path):
    path = str(tmp_path / "w.h5")
    _cudnn_weights_file(path, K1.CuDNNGRU(4, name="rnn"))
    target = tf_keras.Sequential([tf_keras.Input((7, 5)),
                                  tf_keras.layers.GRU(4, reset_after=False, name="rnn")])
    assert raised(lambda: target.load_weights(path)) == quoted("tf-keras-gru")


def test_cudnn_header_keeps_two_biases_by_default():
    spec = importlib.util.find_spec("nvidia.cudnn")
    header = Path(list(spec.submodule_search_locations)[0]) / "include" / "cudnn_adv.h"
    lines = [line.strip() for line in header.read_text(encoding="utf-8").splitlines()]
    assert quoted("cudnn-double-bias") in lines
    from importlib.metadata import version
    assert version("nvidia-cudnn-cu12").startswith("9.28."), "the page names cuDNN 9.28"


# ------------------------------------------------------------------ facts the page states
def test_cudnn_layers_are_in_the_tf1_api_of_tf_keras_only():
    for name in ("CuDNNLSTM", "CuDNNGRU"):
        assert hasattr(K1, name), name
        assert not hasattr(K2, name) and not hasattr(tf_keras.layers, name), name
        assert not hasattr(keras.layers, name), name


def test_cudnn_layers_and_lstm_gru_call_the_same_op():
    k3_tf_rnn = importlib.import_module("keras.src.backend.tensorflow.rnn")
    from tf_keras.src.layers.rnn import cudnn_gru, cudnn_lstm, gru, lstm
    for module in (cudnn_lstm, cudnn_gru, lstm, gru, k3_tf_rnn):
        assert "tf.raw_ops.CudnnRNNV3(" in inspect.getsource(module), module.__name__


def _arguments(*functions) -> set[str]:
    names = set()
    for fn in functions:
        names |= {p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name != "self"}
    return names


def test_every_cudnn_argument_but_time_major_exists_in_keras3():
    from tf_keras.src.layers.rnn.base_cudnn_rnn import _CuDNNRNN
    for old, new in ((K1.CuDNNLSTM, keras.layers.LSTM), (K1.CuDNNGRU, keras.layers.GRU)):
        old_args = _arguments(old.__init__, _CuDNNRNN.__init__)
        new_args = _arguments(new.__init__)
        assert old_args - new_args == {"time_major"}, (old.__name__, old_args - new_args)


def test_cudnnlstm_has_no_cpu_kernel_and_takes_no_mask():
    x = np.zeros((2, 5, 3), "float32")
    if tf.config.list_logical_devices("GPU"):
        assert K1.CuDNNLSTM(4)(x).shape == (2, 4)
    else:
        with pytest.raises(tf.errors.NotFoundError, match=r"Could not find device for node: "
                           r"\{\{node CudnnRNNV3\}\}"):
            K1.CuDNNLSTM(4)(x)
    with pytest.raises(ValueError, match="Masking is not supported for CuDNN RNNs."):
        K1.CuDNNLSTM(4)(x, mask=np.ones((2, 5), bool))


def test_old_and_new_defaults():
    k2 = tf_keras.activations
    assert K1.LSTM(2).recurrent_activation is k2.hard_sigmoid  # tf.compat.v1: TF 1's defaults
    old_gru = K1.GRU(2)
    assert old_gru.recurrent_activation is k2.hard_sigmoid and old_gru.reset_after is False
    assert K2.LSTM(2).recurrent_activation is k2.sigmoid  # tf-keras's own API: TF 2's defaults
    assert K2.GRU(2).reset_after is True
    assert keras.layers.LSTM(2).cell.recurrent_activation is keras.activations.sigmoid
    gru = keras.layers.GRU(2)
    assert gru.cell.recurrent_activation is keras.activations.sigmoid and gru.cell.reset_after


POINTS = np.linspace(-4, 4, 33).astype("float32")


def test_hard_sigmoid_differs_between_keras2_and_keras3():
    k2 = tf_keras.activations.hard_sigmoid(tf.constant(POINTS)).numpy()
    k3 = keras.ops.convert_to_numpy(keras.activations.hard_sigmoid(POINTS))
    np.testing.assert_allclose(k2, np.clip(0.2 * POINTS + 0.5, 0, 1), atol=1e-6)
    np.testing.assert_allclose(k3, np.clip(POINTS / 6 + 0.5, 0, 1), atol=1e-6)


# ------------------------------------------------------------------ the conversion
@pytest.mark.parametrize("seed, batch, steps, input_dim, units", [
    (0, 3, 7, 5, 4), (1, 2, 4, 3, 6), (2, 1, 3, 4, 4), (3, 2, 5, 1, 1)])
def test_conversion_matches_nvidia_equations(seed, batch, steps, input_dim, units):
    cudnn_weights.check(seed, batch, steps, input_dim, units)  # asserts inside


def test_the_check_fails_on_a_wrong_conversion(monkeypatch):
    naive = lambda k, r, b: [k, r, b[:b.size // 2]]  # noqa: E731  (kernels copied as they are)
    monkeypatch.setattr(cudnn_weights, "lstm_from_cudnn", naive)
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        cudnn_weights.check()


@pytest.mark.parametrize("input_dim, units", [(5, 4), (3, 3), (1, 6)])
def test_conversion_equals_tf_keras_loader(input_dim, units):
    rng = np.random.default_rng(input_dim * 10 + units)
    for gates, layer, convert in ((4, tf_keras.layers.LSTM(units), cudnn_weights.lstm_from_cudnn),
                                  (3, tf_keras.layers.GRU(units), cudnn_weights.gru_from_cudnn)):
        layer.build((None, 2, input_dim))
        cudnn = [rng.normal(size=(input_dim, gates * units)),
                 rng.normal(size=(units, gates * units)),
                 rng.normal(size=(2 * gates * units,))]
        theirs = hdf5_format._convert_rnn_weights(layer, [a.copy() for a in cudnn])
        for ours, expected in zip(convert(*cudnn), theirs):
            np.testing.assert_array_equal(ours, expected)


def test_conversion_refuses_other_shapes():
    with pytest.raises(ValueError, match=r"a CuDNNLSTM bias has shape \(32,\), got \(16,\)"):
        cudnn_weights.lstm_from_cudnn(np.zeros((3, 16)), np.zeros((4, 16)), np.zeros(16))
    with pytest.raises(ValueError, match=r"a CuDNNGRU bias has shape \(24,\), got \(2, 12\)"):
        cudnn_weights.gru_from_cudnn(np.zeros((3, 12)), np.zeros((4, 12)), np.zeros((2, 12)))


OTHER_BACKEND = textwrap.dedent("""
    import sys
    sys.path.insert(0, {legacy!r})
    import keras, numpy as np
    import cudnn_weights as cw

    assert keras.backend.backend() == {backend!r}
    assert not hasattr(keras.layers, "CuDNNLSTM") and not hasattr(keras.layers, "CuDNNGRU")
    points = np.linspace(-4, 4, 33).astype("float32")
    got = keras.ops.convert_to_numpy(keras.activations.hard_sigmoid(points))
    np.testing.assert_allclose(got, np.clip(points / 6 + 0.5, 0, 1), atol=1e-6)
    cw.check()
    # An H5 file written by tf-keras, read and converted without TensorFlow.
    x = np.random.default_rng(5).normal(size=(2, 7, 5)).astype("float32")
    for name, convert, reference, path in [
            ("LSTM", cw.lstm_from_cudnn, cw.cudnn_lstm_reference, {lstm!r}),
            ("GRU", cw.gru_from_cudnn, cw.cudnn_gru_reference, {gru!r})]:
        weights = cw.read_h5_weights(path, "rnn")
        layer = getattr(keras.layers, name)(4, return_sequences=True)
        layer.build(x.shape)
        layer.set_weights(convert(*weights))
        np.testing.assert_allclose(keras.ops.convert_to_numpy(layer(x)),
                                   reference(x.astype("float64"), *weights), rtol=1e-5, atol=1e-5)
    assert "tensorflow" not in sys.modules and "tf_keras" not in sys.modules
    print("ok")
""")


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_keras3_other_backends(backend, tmp_path):
    lstm, gru = str(tmp_path / "lstm.h5"), str(tmp_path / "gru.h5")
    _cudnn_weights_file(lstm, K1.CuDNNLSTM(4, name="rnn"))
    _cudnn_weights_file(gru, K1.CuDNNGRU(4, name="rnn"))
    code = OTHER_BACKEND.format(legacy=str(LEGACY), backend=backend, lstm=lstm, gru=gru)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "KERAS_BACKEND": backend})
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-3000:]


def test_read_h5_weights_reads_weights_and_model_files(tmp_path):
    for layer in (K1.CuDNNLSTM(4, name="rnn"), K1.CuDNNGRU(4, name="rnn")):
        model = tf_keras.Sequential([tf_keras.Input((7, 5)), layer])
        model.save_weights(str(tmp_path / "w.h5"))
        model.save(str(tmp_path / "m.h5"))
        for file in ("w.h5", "m.h5"):
            read = cudnn_weights.read_h5_weights(str(tmp_path / file), "rnn")
            assert [a.shape for a in read] == [tuple(w.shape) for w in model.get_weights()]
            for a, b in zip(read, model.get_weights()):
                np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------ the checker on old models
def _old_keras3_model():
    inputs = keras.Input((6, 3))
    seq = keras.layers.LSTM(4, recurrent_activation="hard_sigmoid", return_sequences=True,
                            name="lstm")(inputs)
    out = keras.layers.GRU(4, reset_after=False, name="gru")(seq)
    return keras.Model(inputs, out, name="old")


def test_checker_flags_a_loaded_keras3_model_with_old_defaults(tmp_path):
    path = tmp_path / "old.keras"
    _old_keras3_model().save(path)
    loaded = keras.saving.load_model(path)
    found = {(f.layer, f.criterion) for f in check_model(loaded)}
    assert found == {("old/lstm", "recurrent_activation"), ("old/gru", "reset_after")}, found
    run = checker_here(path)  # the command line's answer
    assert run.returncode == 1, run.stderr
    assert "[recurrent_activation]" in run.stdout and "[reset_after]" in run.stdout


def test_checker_flags_a_tf_keras_h5_with_tf1_defaults(tmp_path):
    path = str(tmp_path / "old.h5")
    tf_keras.Sequential([tf_keras.Input((6, 3)), K1.LSTM(4, return_sequences=True, name="lstm"),
                         K1.GRU(4, name="gru")], name="old").save(path)
    loaded = tf_keras.models.load_model(path)
    found = {(f.layer, f.criterion) for f in check_model(loaded)}
    assert found == {("old/lstm", "recurrent_activation"), ("old/gru", "recurrent_activation"),
                     ("old/gru", "reset_after")}, found
    # The same model with TF 2's defaults is eligible: the checker does not flag everything.
    tf_keras.Sequential([tf_keras.Input((6, 3)), K2.LSTM(4, return_sequences=True, name="lstm"),
                         K2.GRU(4, name="gru")], name="new").save(path)
    assert check_model(tf_keras.models.load_model(path)) == []


# ------------------------------------------------------------------ the pages
def test_pages_share_snippets_and_outputs_and_anchors():
    embeds = re.compile(r'--8<-- "[^"]+"|<!-- output: [^>]+-->|\{#[\w-]+\}')
    assert embeds.findall(PAGES["en"]) == embeds.findall(PAGES["es"])
    for anchor in ("cudnnlstm-import-error", "old-defaults", "old-weights"):
        assert "{#" + anchor + "}" in PAGES["en"], anchor
    legacy_snippets = {p.relative_to(SNIPPETS).as_posix() for p in LEGACY.glob("*.py")}
    shown = set(re.findall(r'<!-- output: ([^ ]+) -->', PAGES["en"]))
    assert shown == legacy_snippets, shown ^ legacy_snippets


def test_page_is_in_the_nav_after_fixing_it_in_both_languages():
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert "  - Fixing it: fixing.md\n  - Old code and old weights: legacy.md\n" in config
    assert "            Old code and old weights: Código y pesos antiguos\n" in config
