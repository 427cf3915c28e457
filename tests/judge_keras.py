"""An independent judge for snippets/cudnn_check.py's check_model, on generated models.

Run as a program, one Keras 3 backend per process (Keras reads KERAS_BACKEND once):

    KERAS_BACKEND=jax python tests/judge_keras.py --models 40
    python tests/judge_keras.py --keras2 --models 30        # tf-keras (Keras 2)

It builds models the way users build them: a mask (Masking, Embedding(mask_zero=True)) or none,
Bidirectional, a nested model, a Lambda calling a layer Keras does not track, a custom layer
holding the RNN, a user class named LSTM built on keras.layers.RNN, a layer shared by a masked
and an unmasked input, and models saved and reloaded (.keras; .h5 for tf-keras). Each RNN layer
is one or two arguments away from the defaults.

The judge's verdict is the library's, read with a different instrument from the checker's probe.
The probe replaces Keras's own functions (`_is_gpu_available`, `_cudnn_lstm`, ...) and re-runs
Keras's mask check; the judge touches none of them. For Keras 3, tests/keras3_witness.py
pretends a GPU in the framework (tf.config, jax.default_backend, torch.cuda), lets all of Keras's
code run, and counts the framework calls that run cuDNN (TensorFlow's CudnnRNNV3 op, the rnn_fwd
primitive in the traced JAX program, torch._VF.lstm/gru). For tf-keras, the judge lists a GPU in
`tf.config.list_logical_devices` (the probe patches tf-keras's get_context_device_type instead)
and counts tf-keras's `gpu_lstm`/`gpu_gru` calls, answered with tf-keras's own standard
implementation.

The model takes cuDNN when every RNN direction it runs reached that call. The checker gets the
same batch (`sample=`) and must say [] exactly then.

Then each planted wrong rule (PLANTS: one wrong belief about the library per backend, put into
the checker's reading of its probe) must make the comparison fail on some model: the judge
could not catch a wrong checker otherwise. Prints one JSON object; exit status 1 on a
disagreement or on a planted rule that went unnoticed.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
KERAS2 = "--keras2" in sys.argv
BACKEND = "tensorflow" if KERAS2 else os.environ.setdefault("KERAS_BACKEND", "tensorflow")
sys.path.insert(0, str(REPO / "snippets"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

import keras3_witness  # noqa: E402  (tests/)

if KERAS2:
    import tensorflow as tf
    import tf_keras as keras
else:
    import keras
    assert keras.backend.backend() == BACKEND, (keras.backend.backend(), BACKEND)

import cudnn_check  # noqa: E402

L = keras.layers


# ----------------------------------------------------------------- the library's verdict
@contextlib.contextmanager
def keras2_pretend_gpu():
    """tf-keras believes a GPU is listed; its eager path then calls gpu_lstm/gpu_gru, which we
    count and answer with tf-keras's own standard implementation. CuDNNLSTM and CuDNNGRU call
    TensorFlow's cuDNN op (CudnnRNNV3) themselves: each call is counted and answered with
    zeros of the op's shapes (it has no CPU kernel)."""
    lstm = importlib.import_module("tf_keras.src.layers.rnn.lstm")
    gru = importlib.import_module("tf_keras.src.layers.rnn.gru")
    calls = []
    config = lstm.tf.config  # the tf.config module tf-keras reads (its compat.v2 copy)
    assert gru.tf.config is config
    saved = lstm.gpu_lstm, gru.gpu_gru
    raw_ops = lstm.tf.raw_ops  # the op module CuDNNLSTM/CuDNNGRU call (tf.compat.v2's)
    real_op = raw_ops.CudnnRNNV3

    def cudnn_op(**kwargs):
        calls.append("CudnnRNNV3")
        x, h = kwargs["input"], kwargs["input_h"]  # time major; h: (1, batch, units)
        out = tf.zeros(tf.concat([tf.shape(x)[:2], tf.shape(h)[2:]], 0), x.dtype)
        return out, h, kwargs.get("input_c", h), tf.zeros([0], x.dtype), tf.zeros([0], tf.int8)
    raw_ops.CudnnRNNV3 = cudnn_op

    def counted(module, standard):
        def gpu(**kwargs):
            calls.append(standard)
            return getattr(module, standard)(zero_output_for_mask=True, **kwargs)
        return gpu
    lstm.gpu_lstm, gru.gpu_gru = counted(lstm, "standard_lstm"), counted(gru, "standard_gru")
    try:
        with keras3_witness.gpu_listed(config):
            yield calls
    finally:
        lstm.gpu_lstm, gru.gpu_gru = saved
        raw_ops.CudnnRNNV3 = real_op


def directions_on_cudnn(model, x) -> int:
    if KERAS2:
        with keras2_pretend_gpu() as calls:
            model(x, training=False)
        return len(calls)
    return keras3_witness.cudnn_directions(lambda a: model(a, training=False), x)


# ----------------------------------------------------------------- planted wrong rules
def _cell(layer):
    return getattr(layer, "cell", None)


def _all_masks_reach_cudnn(rec):
    """Wrong: the TF backend sends any mask to cuDNN (no right-padding check)."""
    rec.masks_refused.clear()


def _masks_keep_cudnn(rec):
    """Wrong: a masked LSTM keeps cuDNN on this backend."""
    if rec.masked_calls:
        rec.cudnn = rec.calls


def _gru_never_cudnn(rec):
    """Wrong (true before Keras 3.14): a GRU never takes cuDNN on the PyTorch backend."""
    if type(_cell(rec.layer)).__name__ == "GRUCell":
        rec.cudnn = 0


def _recurrent_dropout_keeps_cudnn(rec):
    """Wrong: recurrent_dropout keeps tf-keras's cuDNN kernel."""
    if getattr(_cell(rec.layer), "recurrent_dropout", 0):
        rec.cudnn = rec.calls


PLANTS = {"tensorflow": _all_masks_reach_cudnn, "jax": _masks_keep_cudnn,
          "torch": _gru_never_cudnn, "tf_keras": _recurrent_dropout_keeps_cudnn}


@contextlib.contextmanager
def _records_planted(rewrite):
    """A checker whose probe's records are rewritten by `rewrite(records)` before check_model
    reads them."""
    real = cudnn_check.probe_model

    def wrong(model, sample=None):
        records = real(model, sample)
        rewrite(records)
        return records
    cudnn_check.probe_model = wrong
    try:
        yield
    finally:
        cudnn_check.probe_model = real


def planted(rule):
    """The checker with one wrong rule: each of its probe's records rewritten by `rule` before
    check_model reads them."""
    def each(records):
        for rec in records.values():
            rule(rec)
    return _records_planted(each)


# ----------------------------------------------------------------- generated models
class LSTM(L.RNN):
    """A user class named LSTM, built on the generic RNN layer."""
    def __init__(self, units, **kwargs):
        super().__init__(L.LSTMCell(units), **kwargs)


class Holder(L.Layer):
    """A custom layer holding the RNN as an attribute (Keras tracks it)."""
    def __init__(self, rnn, **kwargs):
        super().__init__(**kwargs)
        self.rnn = rnn

    def call(self, x, mask=None):
        return self.rnn(x, mask=mask)


def rnn_layer(rng, kind, flaw, name):
    cls = L.LSTM if kind == "lstm" else L.GRU
    args = {"recurrent_dropout": dict(recurrent_dropout=0.2), "unroll": dict(unroll=True),
            "activation": dict(activation="relu"), "use_bias": dict(use_bias=False),
            "reset_after": dict(reset_after=False)}.get(flaw, {})
    if flaw == "use_cudnn" and not KERAS2:
        args = dict(use_cudnn=False)
    return cls(3, name=name, **args)


SHAPES = ["plain", "bidirectional", "nested", "lambda", "holder", "user_lstm", "shared"]
MASKS = ["none", "masking", "embedding"]


def build(rng: random.Random, i: int):
    """The i-th model: every shape and every mask source come round in turn."""
    kind = rng.choice(["lstm", "lstm", "gru"])
    flaws = ["none"] * 4 + ["recurrent_dropout", "unroll", "activation", "use_bias"]
    flaws += ["reset_after"] if kind == "gru" else []
    flaws += [] if KERAS2 else ["use_cudnn"]
    flaw = rng.choice(flaws)
    shape = SHAPES[i % len(SHAPES)]
    mask = MASKS[(i // len(SHAPES) + i) % len(MASKS)]
    if KERAS2 and shape == "lambda":
        shape = "plain"  # tf-keras Lambda layers track the layers they call: not a case there
    save = (i % 4 == 3 or rng.random() < 0.2) and shape not in ("lambda", "holder", "user_lstm")
    rnn = rnn_layer(rng, kind, flaw, "rnn")
    if shape == "user_lstm":
        rnn = LSTM(3, name="rnn")
    directions = 1
    if mask == "embedding":
        inp = keras.Input((5,), dtype="int32")
        x = L.Embedding(10, 3, mask_zero=True)(inp)
    else:
        inp = keras.Input((5, 3))
        x = L.Masking(0.0)(inp) if mask == "masking" else inp
    if shape == "bidirectional":
        y, directions = L.Bidirectional(rnn, name="bi")(x), 2
    elif shape == "nested":
        inner = keras.Sequential([keras.Input((5, 3)), rnn], name="inner")
        y = inner(x)
        mask = "none"  # a nested Sequential does not pass the outer mask on
    elif shape == "lambda":
        y = L.Lambda(lambda t: rnn(t), name="lam")(x)
        mask = "none"  # a Lambda drops the mask
    elif shape == "holder":
        y = Holder(rnn, name="holder")(x)
    elif shape == "shared":
        inp2 = keras.Input((5, 3))
        y = L.Concatenate()([rnn(x), rnn(inp2)])
        inp, directions = [inp, inp2], 2
    else:
        y = rnn(x)
    model = keras.Model(inp, y, name="m")
    described = dict(kind=kind, flaw=flaw, mask=mask, shape=shape, save=save)
    if save:
        suffix = rng.choice([".keras", ".h5"]) if KERAS2 else ".keras"
        described["save"] = suffix
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m" + suffix)
            model.save(path)
            load = keras.models.load_model if KERAS2 else keras.saving.load_model
            model = load(path, compile=False, **({} if KERAS2 else {
                "custom_objects": {"LSTM": LSTM, "Holder": Holder}}))
    return model, described, directions


def batch(rng: random.Random, model, described):
    """One batch, padded at the end, at the start, or not at all."""
    pad = rng.choice(["post", "pre", "none"])
    lengths = [5, rng.randint(1, 4)] if pad != "none" else [5, 5]
    out = []
    for t in model.inputs:
        if t.dtype in ("int32", tf.int32) if KERAS2 else t.dtype == "int32":
            a = np.zeros((2, 5), "int32")
        else:
            a = np.zeros((2, 5, 3), "float32")
        for row, n in enumerate(lengths):
            where = slice(0, n) if pad == "post" else slice(5 - n, 5)
            a[row, where] = 1 + np.arange(n).reshape((n,) + (1,) * (a.ndim - 2)) % 7
        out.append(a)
    described["padding"] = pad
    return out[0] if len(out) == 1 else out


# ----------------------------------------------------------------- every other recurrent layer
# Models holding a recurrent layer that is not an LSTM or GRU layer (#43), in the forms users
# write them: each built-in kind, RNN over any cell (stacked, wrapped, of yours), cells and
# layers of yours that loop over time steps in Python, and Keras 2's TF 1 and CuDNN layers; an
# LSTM or GRU layer as a control, and sometimes an LSTM beside the layer judged. The judge is the
# same as above: the framework call that runs cuDNN, with a GPU pretended in the framework.
if KERAS2:
    _tanh, _matmul, _zeros, _batch = tf.tanh, tf.matmul, tf.zeros, (lambda x: tf.shape(x)[0])
    _sigmoid, _stack = tf.sigmoid, tf.stack
else:
    _tanh, _matmul, _zeros = keras.ops.tanh, keras.ops.matmul, keras.ops.zeros
    _batch = (lambda x: keras.ops.shape(x)[0])
    _sigmoid, _stack = keras.ops.sigmoid, keras.ops.stack


def _initial(cell, x):
    sizes = cell.state_size if isinstance(cell.state_size, (list, tuple)) else [cell.state_size]
    return [_zeros((_batch(x), n)) for n in sizes]


class StepCell(L.Layer):
    """A cell of yours: a tanh step on its own weights."""
    def __init__(self, units=3, **kwargs):
        super().__init__(**kwargs)
        self.units = self.state_size = self.output_size = units

    def build(self, shape):
        self.kernel = self.add_weight(shape=(shape[-1], self.units), name="kernel")
        self.recurrent = self.add_weight(shape=(self.units, self.units), name="recurrent")
        self.built = True

    def call(self, x, states):
        h = _tanh(_matmul(x, self.kernel) + _matmul(states[0], self.recurrent))
        return h, [h]


class WrapCell(L.Layer):
    """A cell of yours around another cell (as tf-keras's cell wrappers are)."""
    def __init__(self, cell, **kwargs):
        super().__init__(**kwargs)
        self.cell, self.state_size, self.output_size = cell, cell.state_size, 3

    def build(self, shape):
        self.cell.build(shape)
        self.built = True

    def call(self, x, states):
        return self.cell(x, states)


class CellLoop(L.Layer):
    """A layer of yours that steps a cell through time in Python."""
    def __init__(self, cell, **kwargs):
        super().__init__(**kwargs)
        self.cell = cell

    def call(self, x):
        states = _initial(self.cell, x)
        for t in range(x.shape[1]):
            out, states = self.cell(x[:, t], states)
            states = states if isinstance(states, (list, tuple)) else [states]
        return out


class DenseLoop(L.Layer):
    """A layer of yours: Dense layers run once per time step, each step feeding the next."""
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.inp, self.rec = L.Dense(3), L.Dense(3, use_bias=False)

    def call(self, x):
        h = _zeros((_batch(x), 3))
        for t in range(x.shape[1]):
            h = _tanh(self.inp(x[:, t]) + self.rec(h))
        return h


class WeightLoop(L.Layer):
    """A layer of yours: its own weights read once per time step."""
    def build(self, shape):
        self.kernel = self.add_weight(shape=(shape[-1], 3), name="kernel")
        self.recurrent = self.add_weight(shape=(3, 3), name="recurrent")
        self.built = True

    def call(self, x):
        h = _zeros((_batch(x), 3))
        for t in range(x.shape[1]):
            h = _tanh(_matmul(x[:, t], self.kernel) + _matmul(h, self.recurrent))
        return h


class TwoViews(L.Layer):
    """Not a loop over time: one Dense layer on the sequence and on the sequence doubled, and a
    weight of its own read twice, on sequences of two steps (as many calls and reads as
    steps)."""
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = L.Dense(3)

    def build(self, shape):
        self.scale = self.add_weight(shape=(3,), name="scale")
        self.built = True

    def call(self, x):
        both = self.dense(x) * self.scale + self.dense(2.0 * x) * self.scale
        return both[:, -1]


class FrameLoop(L.Layer):
    """A loop over time steps that is not a recurrence: a Dense layer applied to each frame on
    its own, in Python; no step uses what another computed."""
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = L.Dense(3)

    def call(self, x):
        return _stack([self.dense(x[:, t]) for t in range(x.shape[1])], axis=1)


class ScoreLoop(L.Layer):
    """Not a recurrence either: a gated score per time step (sigmoid and tanh, as an LSTM's
    gates) from its own weights, each step on its own."""
    def build(self, shape):
        self.gate = self.add_weight(shape=(shape[-1], 3), name="gate")
        self.value = self.add_weight(shape=(shape[-1], 3), name="value")
        self.built = True

    def call(self, x):
        return _stack([_sigmoid(_matmul(x[:, t], self.gate)) * _tanh(_matmul(x[:, t], self.value))
                       for t in range(x.shape[1])], axis=1)


NOT_A_LOOP = ["views", "frames", "scores"]  # TwoViews, FrameLoop, ScoreLoop, one a round


class BackendLoop(L.Layer):
    """A layer of yours that runs Keras 2's generic loop itself (tf_keras.backend.rnn)."""
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.step = L.Dense(3)

    def call(self, x):
        def step(inputs, states):
            h = tf.tanh(self.step(inputs) + states[0])
            return h, [h]
        return keras.backend.rnn(step, x, [tf.zeros((tf.shape(x)[0], 3))])[0]


CELLS = ["LSTMCell", "GRUCell", "SimpleRNNCell"] + (
    ["ResidualWrapper", "DropoutWrapper"] if KERAS2 else []) + ["StepCell", "stacked", "WrapCell"]


def _other_cell(index: int, name="cell"):
    """A cell of Keras or of yours, stacked or wrapped: each comes round in turn."""
    pick = CELLS[index % len(CELLS)]
    if pick == "stacked":
        return pick, L.StackedRNNCells([L.SimpleRNNCell(3), L.GRUCell(3)], name=name)
    if pick == "WrapCell":
        return pick, WrapCell(L.LSTMCell(3), name=name)
    if pick in ("ResidualWrapper", "DropoutWrapper"):  # tf-keras's own cell wrappers
        wrappers = importlib.import_module("tf_keras.src.layers.rnn.cell_wrappers")
        return pick, getattr(wrappers, pick)(L.GRUCell(3), name=name)
    return pick, (StepCell if pick == "StepCell" else getattr(L, pick))(3, name=name)


OTHER_KINDS = ["simple_rnn", "conv_lstm", "rnn_cell", "rnn_cell_list", "cell_loop", "dense_loop",
               "weight_loop", "bidirectional", "time_distributed", "nested", "control",
               "not_a_loop"]
OTHER_KINDS += ["backend_loop", "v1", "cudnn"] if KERAS2 else []


def build_other(rng: random.Random, i: int, offset: int = 0):
    """The i-th model of this part: (model, described, directions of the layer judged, the
    names the checker must give it, directions of the whole model). Every kind comes round
    in turn, and a cell two new ones each round, from `offset` on."""
    kind = OTHER_KINDS[i % len(OTHER_KINDS)]
    shape, described, names, directions = (4, 3), {"kind": kind}, ["other"], 1
    cell_index = offset + 2 * (i // len(OTHER_KINDS)) + (kind == "cell_loop")
    if kind == "simple_rnn":
        args = rng.choice([{}, {"activation": "relu"}, {"unroll": True}, {"go_backwards": True},
                           {"return_sequences": True}, {"use_bias": False}])
        layer, described["args"] = L.SimpleRNN(3, name="other", **args), args
    elif kind == "conv_lstm":
        dims = rng.choice([1, 2, 3])
        shape = {1: (3, 4, 2), 2: (3, 3, 3, 2), 3: (2, 2, 2, 2, 1)}[dims]
        layer = getattr(L, f"ConvLSTM{dims}D")(2, 2, padding="same", name="other")
        described["layer"] = f"ConvLSTM{dims}D"
    elif kind == "rnn_cell":
        described["cell"], cell = _other_cell(cell_index)
        layer = L.RNN(cell, name="other")
    elif kind == "rnn_cell_list":  # Keras stacks a list of cells itself
        layer = L.RNN([L.LSTMCell(3), L.GRUCell(3)], name="other")
    elif kind == "cell_loop":
        described["cell"], cell = _other_cell(cell_index)
        layer, names = CellLoop(cell, name="loop"), ["cell"]
    elif kind in ("dense_loop", "weight_loop", "backend_loop"):
        layer = {"dense_loop": DenseLoop, "weight_loop": WeightLoop,
                 "backend_loop": BackendLoop}[kind](name="loop")
        names = ["loop"]
    elif kind == "time_distributed":  # a SimpleRNN over each of 2 sequences
        shape, layer = (2, 4, 3), L.TimeDistributed(L.SimpleRNN(3, name="other"), name="td")
    elif kind == "nested":  # a model inside the model
        inner = rng.choice(["SimpleRNN", "RNN(SimpleRNNCell)"])
        rnn = L.SimpleRNN(3, name="other") if inner == "SimpleRNN" else L.RNN(
            L.SimpleRNNCell(3), name="other")
        layer, described["inner"] = keras.Sequential([keras.Input(shape), rnn], name="inner"), inner
    elif kind == "bidirectional":
        inner = rng.choice(["SimpleRNN", "RNN(GRUCell)"])
        rnn = L.SimpleRNN(3, name="other") if inner == "SimpleRNN" else L.RNN(
            L.GRUCell(3), name="other")
        layer, described["inner"] = L.Bidirectional(rnn, name="bi"), inner
        names, directions = ["forward_other", "backward_other"], 2
    elif kind == "v1":  # tf.compat.v1.keras.layers.LSTM and GRU
        base = rng.choice(["lstm", "gru"])
        v1 = importlib.import_module(f"tf_keras.src.layers.rnn.{base}_v1")
        layer = getattr(v1, base.upper())(3, name="other", recurrent_activation="sigmoid",
                                          **({"reset_after": True} if base == "gru" else {}))
        described["layer"] = f"v1 {base.upper()} with the TF 2 defaults"
    elif kind == "cudnn":  # tf.compat.v1.keras.layers.CuDNNLSTM and CuDNNGRU
        name = rng.choice(["CuDNNLSTM", "CuDNNGRU"])
        module = {"CuDNNLSTM": "cudnn_lstm", "CuDNNGRU": "cudnn_gru"}[name]
        layer = getattr(importlib.import_module(f"tf_keras.src.layers.rnn.{module}"), name)(
            3, name="other")
        described["layer"] = name
    elif kind == "not_a_loop":  # no recurrent layer: nothing to name, nothing to find
        described["not_a_loop"] = pick = NOT_A_LOOP[(offset + i // len(OTHER_KINDS)) % 3]
        layer, names, directions = {"views": TwoViews, "frames": FrameLoop,
                                    "scores": ScoreLoop}[pick](name=pick), [], 0
        shape = (2, 3) if pick == "views" else shape
    else:  # the control: a layer with a cuDNN path (a GRU never takes it on JAX)
        cls = ["LSTM", "GRU"][i // len(OTHER_KINDS) % 2]
        layer, described["layer"] = getattr(L, cls)(3, name="other"), cls
    inp = keras.Input(shape)
    outputs = [layer(inp)]
    companion = len(shape) == 2 and rng.random() < 0.4
    if companion:  # an LSTM that takes cuDNN beside it: the model's verdict needs both
        outputs.append(L.LSTM(3, name="companion")(inp))
    model = keras.Model(inp, outputs, name="m")
    described["companion"] = companion
    ours = kind.endswith("loop") or kind in ("v1", "cudnn", "not_a_loop") or described.get("cell") in (
        "StepCell", "WrapCell", "ResidualWrapper", "DropoutWrapper")  # load with custom objects
    if not ours and (i + i // len(OTHER_KINDS)) % 3 == 0:  # saved and loaded, as the
        # command line reads it (every third model where no class of yours is needed)
        suffix = rng.choice([".keras", ".h5"]) if KERAS2 else ".keras"
        described["saved"] = suffix
        with tempfile.TemporaryDirectory() as d:
            model.save(os.path.join(d, "m" + suffix))
            load = keras.models.load_model if KERAS2 else keras.saving.load_model
            model = load(os.path.join(d, "m" + suffix), compile=False)
    return model, described, directions, names, directions + companion


def _others_take_cudnn(records):
    """Wrong (the checker before #43): a recurrent layer that is not an LSTM or GRU layer
    (SimpleRNN, ConvLSTM, RNN over a cell, a loop of yours) goes unnoticed, as if it took
    cuDNN."""
    for rec in records.values():
        if cudnn_check._kind(rec.layer) == "rnn":
            rec.cudnn = rec.calls
    records.loops.clear()


def _cudnn_layers_fall_back(records):
    """Wrong: Keras 2's CuDNNLSTM and CuDNNGRU fall back like a TF 1 LSTM."""
    for rec in records.values():
        if cudnn_check._kind(rec.layer) == "cudnn":
            rec.cudnn = 0


def _every_loop_recurs(records):
    """Wrong (the checker before #60): every loop of yours over time steps is a hand-written
    RNN, even one where no step uses what another computed (a layer applied to each frame, a
    score per step)."""


_every_loop_recurs.probe_patch = ("carries_state", lambda *args: True)  # planted in the probe


@contextlib.contextmanager
def _other_planted(plant):
    """A checker with `plant`: its probe's records rewritten, or one of its probe's methods
    replaced (plant.probe_patch: (name, function))."""
    if not hasattr(plant, "probe_patch"):
        with _records_planted(plant):
            yield
        return
    name, wrong = plant.probe_patch
    real = getattr(cudnn_check._Probe, name)
    setattr(cudnn_check._Probe, name, wrong)
    try:
        yield
    finally:
        setattr(cudnn_check._Probe, name, real)


OTHER_PLANTS = [_others_take_cudnn, _every_loop_recurs] + (
    [_cudnn_layers_fall_back] if KERAS2 else [])


def judge_others(n: int, seed: int) -> dict:
    """Each model: the library's verdict on the model and, alone, on the layer judged, against
    the checker's (its report and the verdict it gives that layer by name)."""
    rng = random.Random(seed)
    mismatches, eligible, covered = [], 0, set()
    caught = {plant.__doc__.strip(): None for plant in OTHER_PLANTS}  # the model that shows it
    for i in range(n):
        model, described, layer_dirs, names, model_dirs = build_other(rng, i, 2 * seed)
        covered.update([described["kind"], "cell:" + described.get("cell", "-"),
                        "saved" + described.get("saved", ":no"),
                        "not_a_loop:" + described.get("not_a_loop", "-")])
        x = np.random.default_rng(i).normal(size=(2,) + tuple(model.inputs[0].shape[1:]))
        x = x.astype("float32")
        try:
            reached = directions_on_cudnn(model, x)
        except Exception as exc:  # the judge could not decide: a failure, never a pass
            mismatches.append({"i": i, **described, "judge_error": repr(exc)[:300]})
            continue
        library = reached >= model_dirs
        eligible += library
        report = cudnn_check.check_model(model, sample=x)
        verdicts = [v for p, _, v in report.layers if p.split("/")[-1] in names]
        named = len(verdicts) == len(names)
        layer_ok = described["companion"] or (
            all(v.startswith("uses cuDNN on a GPU") for v in verdicts) == (reached >= layer_dirs))
        if (report == []) != library or not named or not layer_ok or \
                not report.probe.startswith("asked"):
            mismatches.append({"i": i, **described, "library_takes_cudnn": library,
                               "directions_reached": reached, "probe": report.probe,
                               "layers": report.layers,
                               "findings": [(f.layer, f.criterion) for f in report]})
        for plant in OTHER_PLANTS:  # until a model shows the planted rule (one is enough)
            if caught[plant.__doc__.strip()] is None:
                with _other_planted(plant):
                    if (cudnn_check.check_model(model, sample=x) == []) != library:
                        caught[plant.__doc__.strip()] = i
    return {"models": n, "eligible": eligible, "covered": sorted(covered),
            "mismatches": mismatches, "planted": caught}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keras2", action="store_true")
    ap.add_argument("--others", type=int, default=0,
                    help="also judge this many models of every other recurrent layer")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    mismatches, probed, agreed_eligible, covered = [], 0, 0, set()
    plant, caught = PLANTS["tf_keras" if KERAS2 else BACKEND], None
    for i in range(args.models):
        model, described, directions = build(rng, i)
        covered.add(described["shape"])
        covered.add("mask:" + described["mask"])
        covered.add("saved" + described["save"] if described["save"] else "not saved")
        x = batch(rng, model, described)
        try:
            library = directions_on_cudnn(model, x) >= directions
        except Exception as exc:  # the judge could not decide: a failure, never a pass
            mismatches.append({"i": i, **described, "judge_error": repr(exc)[:300]})
            continue
        report = cudnn_check.check_model(model, sample=x)
        probed += report.probe.startswith("asked")
        agreed_eligible += library and report == []
        if (report == []) != library or not report.probe.startswith("asked"):
            mismatches.append({"i": i, **described, "library_takes_cudnn": library,
                               "probe": report.probe,
                               "findings": [(f.layer, f.criterion) for f in report]})
        if caught is None:  # the same model and batch, a checker with one wrong rule, until
            with planted(plant):  # a model shows that it is wrong (one is enough)
                if (cudnn_check.check_model(model, sample=x) == []) != library:
                    caught = i
    others = judge_others(args.others, args.seed) if args.others else None
    print(json.dumps({"keras": "tf-keras " + keras.__version__ if KERAS2 else keras.__version__,
                      "backend": BACKEND, "models": args.models, "probed": probed,
                      "eligible": agreed_eligible, "covered": sorted(covered),
                      "mismatches": mismatches,
                      "planted": {"rule": plant.__doc__.strip(), "caught_by_model": caught},
                      "others": others}, default=str))
    others_failed = others and (others["mismatches"]
                                or None in others["planted"].values())
    return 1 if mismatches or caught is None or others_failed else 0


if __name__ == "__main__":
    sys.exit(main())
