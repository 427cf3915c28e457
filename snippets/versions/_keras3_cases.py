"""The criteria rules as cases, asked of whichever Keras 3 release is installed.

Each case builds a layer and an input, calls the layer once with the backend's own decision code
believing a GPU is there, and notes which cuDNN functions Keras called. Nothing here knows what
a release should do: the same cases run on every Keras 3 release from 3.0.0 on, and the answers
are the records the criteria page's version table is drawn from.

How a GPU is pretended, on every release (the internal names checked in each wheel):
- TensorFlow backend: `_is_gpu_available` answers yes; `_cudnn_lstm`/`_cudnn_gru` are replaced by
  a recorder that runs the release's own mask check where it has one inside them (3.2 and newer),
  notes the call, then raises the NotFoundError a missing cuDNN op raises, so Keras falls back.
- JAX backend: `_is_gpu_available` answers yes where it exists (3.14 and newer);
  `jax.experimental.rnn.lstm`, the cuDNN LSTM, is replaced by a recorder that raises the
  RuntimeError Keras catches.
- PyTorch backend: `_is_cuda_cudnn_available` answers yes where it exists (3.10 and newer), the
  input reads `cuda:0` as its device, and the functions that call cuDNN (`_cudnn_lstm`,
  `_cudnn_gru`, the fused Bidirectional weight packing) are replaced by a recorder that raises
  NotImplementedError, which every release catches.
Before a backend had a cuDNN path, its `cudnn_ok` answers no and nothing needs pretending.
This shows which path Keras chooses; it does not run cuDNN.
"""
import contextlib
import importlib
import inspect
import json
import os

import sys

import numpy as np

BACKEND = os.environ["KERAS_BACKEND"]  # set by the snippet before Keras is imported
import keras  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cudnn_check  # noqa: E402  the site's checker, asked the same question in the same release

assert keras.backend.backend() == BACKEND
rnn = importlib.import_module(f"keras.src.backend.{BACKEND}.rnn")
L = keras.layers

if BACKEND == "tensorflow":
    import tensorflow as tf
elif BACKEND == "torch":
    import torch

    class CudaLooking(torch.Tensor):
        """A CPU tensor that answers `cuda:0` when asked for its device."""
        @property
        def device(self):
            return torch.device("cuda", 0)


def _mask_argument(original, args, kwargs):
    fn = getattr(original, "python_function", original)  # a tf.function wraps it
    bound = inspect.signature(fn).bind_partial(None, *args, **kwargs)
    return bound.arguments.get("mask")


@contextlib.contextmanager
def pretend_gpu():
    calls = []
    saved = []

    def patch(module, name, value):
        if hasattr(module, name):
            saved.append((module, name, getattr(module, name)))
            setattr(module, name, value)

    if BACKEND == "tensorflow":
        def recorder(kind, original):
            def fake(inputs, *args, **kwargs):
                mask = _mask_argument(original, args, kwargs)
                check = getattr(rnn, "_assert_valid_mask", None)
                if mask is not None and check is not None:
                    check(mask)  # eager: an invalid mask raises here and Keras falls back
                calls.append({"kind": kind})
                if tf.executing_eagerly():  # Keras 3.0.0 traces backend.lstm: no values there
                    calls[-1]["inputs"] = np.asarray(inputs).tolist()
                raise tf.errors.NotFoundError(None, None, "pretend_gpu: no cuDNN here")
            return fake
        patch(rnn, "_is_gpu_available", lambda: True)
        patch(rnn, "_cudnn_lstm", recorder("lstm", rnn._cudnn_lstm))
        patch(rnn, "_cudnn_gru", recorder("gru", rnn._cudnn_gru))
    elif BACKEND == "jax":
        def fake_jax(*args, bidirectional=False, **kwargs):
            calls.append({"kind": "bidirectional lstm" if bidirectional else "lstm"})
            raise RuntimeError("pretend_gpu: no cuDNN here")
        patch(rnn, "_is_gpu_available", lambda: True)
        try:
            patch(importlib.import_module("jax.experimental.rnn"), "lstm", fake_jax)
        except ImportError:
            pass
    else:
        def recorder(kind):
            def fake(*args, **kwargs):
                calls.append({"kind": kind})
                raise NotImplementedError("pretend_gpu: no cuDNN here")
            return fake
        patch(rnn, "_is_cuda_cudnn_available", lambda: True)
        patch(rnn, "_cudnn_lstm", recorder("lstm"))
        patch(rnn, "_cudnn_gru", recorder("gru"))
        patch(rnn, "prepare_lstm_params", recorder("bidirectional lstm"))
        patch(rnn, "prepare_gru_params", recorder("bidirectional gru"))
    try:
        yield calls
    finally:
        for module, name, value in reversed(saved):
            setattr(module, name, value)


X = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")
RIGHT = np.array([[True] * 3 + [False] * 2, [True] * 5])  # padding="post"
LEFT = np.array([[False] * 2 + [True] * 3, [True] * 5])  # padding="pre"


def _input():
    if BACKEND == "torch":
        return torch.as_tensor(X).as_subclass(CudaLooking)
    return X


# id: (what the reader would write, builder, call arguments)
CASES = {
    "lstm": ("LSTM(4)", lambda: L.LSTM(4), {}),
    "gru": ("GRU(4)", lambda: L.GRU(4), {}),
    "lstm_mask_right": ("LSTM(4), right-padded mask", lambda: L.LSTM(4), {"mask": RIGHT}),
    "lstm_mask_left": ("LSTM(4), left-padded mask", lambda: L.LSTM(4), {"mask": LEFT}),
    "gru_mask_right": ("GRU(4), right-padded mask", lambda: L.GRU(4), {"mask": RIGHT}),
    "lstm_dropout_training": ("LSTM(4, dropout=0.5), training", lambda: L.LSTM(4, dropout=0.5),
                              {"training": True}),
    "lstm_dropout_inference": ("LSTM(4, dropout=0.5), inference",
                               lambda: L.LSTM(4, dropout=0.5), {"training": False}),
    "lstm_recurrent_dropout": ("LSTM(4, recurrent_dropout=0.5), training",
                               lambda: L.LSTM(4, recurrent_dropout=0.5), {"training": True}),
    "lstm_use_cudnn_false": ("LSTM(4, use_cudnn=False)", lambda: L.LSTM(4, use_cudnn=False), {}),
    "lstm_relu": ('LSTM(4, activation="relu")', lambda: L.LSTM(4, activation="relu"), {}),
    "lstm_unroll": ("LSTM(4, unroll=True)", lambda: L.LSTM(4, unroll=True), {}),
    "lstm_no_bias": ("LSTM(4, use_bias=False)", lambda: L.LSTM(4, use_bias=False), {}),
    "gru_reset_after_false": ("GRU(4, reset_after=False)", lambda: L.GRU(4, reset_after=False),
                              {}),
    "bidirectional_lstm": ("Bidirectional(LSTM(4))", lambda: L.Bidirectional(L.LSTM(4)), {}),
    "bidirectional_gru": ("Bidirectional(GRU(4))", lambda: L.Bidirectional(L.GRU(4)), {}),
    "bidirectional_lstm_use_cudnn_false": (
        "Bidirectional(LSTM(4, use_cudnn=False))",
        lambda: L.Bidirectional(L.LSTM(4, use_cudnn=False)), {}),
}


def run_case(case_id):
    """{"calls": [...], "error": None} or {"calls": [], "error": "TypeError: ..."}."""
    _, build, kwargs = CASES[case_id]
    try:
        layer = build()
        with pretend_gpu() as calls:
            layer(_input(), **kwargs)
    except Exception as e:  # an argument this release does not know, say
        return {"calls": [], "error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    out = {"calls": [c["kind"] for c in calls], "error": None, "checker": checker(layer, kwargs)}
    if BACKEND == "tensorflow" and case_id == "lstm_dropout_inference" and calls \
            and "inputs" in calls[0]:
        # What cuDNN received: the inputs as given, or with features dropped.
        out["inputs_dropped"] = not np.allclose(calls[0]["inputs"], X)
    return out


def checker(layer, kwargs):
    """The criteria the checker names for this layer and call (its static reading, as a reader
    of this release would get it), or the error it raised."""
    try:
        found = cudnn_check.check_layer(layer)
        if kwargs.get("mask") is not None:
            found += cudnn_check.check_mask(kwargs["mask"], backend=BACKEND)
        return sorted({f.criterion for f in found})
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"


def run_all():
    results = {case_id: run_case(case_id) for case_id in CASES}
    return {"keras": keras.__version__, "backend": BACKEND, "cases": results,
            "labels": {case_id: CASES[case_id][0] for case_id in CASES}}


def report(data):
    """Print one line a case and write data/rules.json for the version tables."""
    name = {"tensorflow": "TensorFlow", "jax": "JAX", "torch": "PyTorch"}[BACKEND]
    print(f"Keras {data['keras']} on the {name} backend, a GPU pretended:")
    for case_id, r in data["cases"].items():
        what = r["error"] or (", ".join(r["calls"]) and "cuDNN: " + ", ".join(r["calls"])) \
            or "generic kernel"
        extra = "; inputs dropped before cuDNN" if r.get("inputs_dropped") else ""
        print(f"  {data['labels'][case_id]:42} {what}{extra}")
    folder = os.environ.get("SNIPPET_DATA_DIR")
    if folder:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "rules.json"), "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
