"""An independent judge for snippets/cudnn_check.py's check_model, on generated models.

Run in its own process, one Keras per process (Keras reads KERAS_BACKEND once):

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
    count and answer with tf-keras's own standard implementation."""
    lstm = importlib.import_module("tf_keras.src.layers.rnn.lstm")
    gru = importlib.import_module("tf_keras.src.layers.rnn.gru")
    calls = []
    config = lstm.tf.config  # the tf.config module tf-keras reads (its compat.v2 copy)
    assert gru.tf.config is config
    saved = lstm.gpu_lstm, gru.gpu_gru

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
def planted(rule):
    """The checker with one wrong rule: its probe's records rewritten by `rule` before
    check_model reads them."""
    real = cudnn_check.probe_model

    def wrong(model, sample=None):
        records = real(model, sample)
        for rec in records.values():
            rule(rec)
        return records
    cudnn_check.probe_model = wrong
    try:
        yield
    finally:
        cudnn_check.probe_model = real


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keras2", action="store_true")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    mismatches, probed, agreed_eligible, covered = [], 0, 0, set()
    plant, caught = PLANTS["tf_keras" if KERAS2 else BACKEND], 0
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
        with planted(plant):  # the same model and batch, a checker with one wrong rule
            caught += (cudnn_check.check_model(model, sample=x) == []) != library
    print(json.dumps({"keras": "tf-keras " + keras.__version__ if KERAS2 else keras.__version__,
                      "backend": BACKEND, "models": args.models, "probed": probed,
                      "eligible": agreed_eligible, "covered": sorted(covered),
                      "mismatches": mismatches,
                      "planted": {"rule": plant.__doc__.strip(), "caught_on": caught}},
                     default=str))
    return 1 if mismatches or not caught else 0


if __name__ == "__main__":
    sys.exit(main())
