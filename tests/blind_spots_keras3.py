"""Keras 3 cases the checker used to miss, judged by the backend's own decision.

Run in its own process, one backend per process (tests/content/test_checker_blind_spots.py runs it):

    KERAS_BACKEND=jax python tests/blind_spots_keras3.py

For each case it asks Keras itself, with a GPU pretended by the backend's
snippets/criteria/<backend>/_pretend_gpu.py (which shares no code with the checker), whether every
RNN direction the model runs reaches cuDNN, then asks the checker two ways: the probe on the
same batch, and the static reading (probe=False). Prints one JSON object; the TensorFlow
backend's cases run in the test's own process (judge_cases()).

The fused Bidirectional (Keras >= 3.15, JAX and PyTorch): Keras first tries one fused call for
both directions. The recorder fails it, and Keras then retries each direction; on a GPU the fused
call returns. So the library sends both directions to cuDNN exactly when it made the fused call,
or, where it did not, when each direction made its own call.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BACKEND = os.environ.get("KERAS_BACKEND", "tensorflow")
HELPERS = {"tensorflow": "tf_backend", "jax": "jax_backend", "torch": "torch_backend"}
sys.path.insert(0, str(REPO / "snippets"))
sys.path.insert(0, str(REPO / "snippets" / "criteria" / HELPERS[BACKEND]))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import _pretend_gpu  # noqa: E402  (sets and checks KERAS_BACKEND)

import keras  # noqa: E402

import cudnn_check  # noqa: E402

L = keras.layers


def bidirectional(forward, backward):
    inp = keras.Input((5, 3))
    return keras.Model(inp, L.Bidirectional(forward, backward_layer=backward, name="bi")(inp),
                       name="m")


class Recommender(keras.Model):
    """A subclassed model, not built until its first call."""
    def __init__(self, rnn):
        super().__init__(name="rec")
        self.rnn = rnn

    def call(self, x):
        return self.rnn(x)


class CudnnOff(keras.Model):
    """A subclassed model that runs its layer inside torch.backends.cudnn.flags(enabled=False):
    a decision made outside the layer (#60)."""
    def __init__(self, rnn):
        super().__init__(name="off")
        self.rnn = rnn

    def call(self, x):
        import torch
        with torch.backends.cudnn.flags(enabled=False):
            return self.rnn(x)


def jit_compiled(rnn):
    """A model compiled with jit_compile=True: on PyTorch, its steps run in torch.compile."""
    inp = keras.Input((5, 3))
    model = keras.Model(inp, rnn(inp), name="jit")
    model.compile("sgd", "mse", jit_compile=True)
    return model


class MaskedStrict(keras.Model):
    """A subclassed model whose Embedding(mask_zero=True) passes a mask to an LSTM built with
    use_cudnn=True: the mask as the model really passes it."""
    def __init__(self):
        super().__init__(name="masked")
        self.embed = L.Embedding(20, 3, mask_zero=True)
        self.rnn = L.LSTM(4, use_cudnn=True, name="strict")

    def call(self, x):
        return self.rnn(self.embed(x))


TOKENS = np.array([[3, 7, 2, 0, 0], [5, 1, 4, 4, 9]], "int32")  # right-padded with zeros

# Cases decided outside the layer's arguments, which the static reading does not see.
OUTSIDE = {"LSTM under cudnn.flags(enabled=False)", "GRU under cudnn.flags(enabled=False)",
           "LSTM, compile(jit_compile=True)", "GRU, compile(jit_compile=True)",
           "mask from a subclassed model, use_cudnn=True"}
SAMPLES = {"mask from a subclassed model, use_cudnn=True": TOKENS}


def cases():
    yield "backward unroll=True", 2, lambda: bidirectional(
        L.LSTM(4, name="f"), L.LSTM(4, go_backwards=True, unroll=True, name="b"))
    yield "forward unroll=True", 2, lambda: bidirectional(
        L.LSTM(4, unroll=True, name="f"), L.LSTM(4, go_backwards=True, name="b"))
    yield "backward recurrent_dropout", 2, lambda: bidirectional(
        L.LSTM(4, name="f"), L.LSTM(4, go_backwards=True, recurrent_dropout=0.2, name="b"))
    if BACKEND != "jax":  # JAX has no cuDNN GRU at all
        yield "GRU backward unroll=True", 2, lambda: bidirectional(
            L.GRU(4, name="f"), L.GRU(4, go_backwards=True, unroll=True, name="b"))
    yield "unbuilt subclassed LSTM", 1, lambda: Recommender(L.LSTM(4))
    yield "unbuilt subclassed LSTM, unroll=True", 1, lambda: Recommender(L.LSTM(4, unroll=True))
    if BACKEND in ("jax", "torch"):  # masks never reach cuDNN there: use_cudnn=True raises
        yield "mask from a subclassed model, use_cudnn=True", 1, MaskedStrict
    if BACKEND == "torch":
        yield "LSTM under cudnn.flags(enabled=False)", 1, lambda: CudnnOff(L.LSTM(4))
        yield "GRU under cudnn.flags(enabled=False)", 1, lambda: CudnnOff(L.GRU(4))
        yield "LSTM, compile(jit_compile=True)", 1, lambda: jit_compiled(L.LSTM(4))
        yield "GRU, compile(jit_compile=True)", 1, lambda: jit_compiled(L.GRU(4))


def library_takes_cudnn(model, x, directions) -> bool:
    if BACKEND == "torch":
        x = _pretend_gpu.cuda_looking(x)
    with _pretend_gpu.pretend_gpu() as calls:
        try:
            if BACKEND == "torch":  # below Keras, PyTorch decides: at::cudnn_is_acceptable
                return _torch_takes_cudnn(model, x, calls, directions)  # reads its switch first
            model(x)
        except ValueError as err:  # use_cudnn=True: Keras raises where cuDNN is refused, and
            if "use_cudnn=True was specified" not in str(err):  # where the pretended call
                raise  # failed (a call it made: a cuDNN call on a GPU)
    fused = sum(c.startswith("bidirectional") for c in calls)
    return fused > 0 or len(calls) >= directions


def _torch_takes_cudnn(model, x, calls, directions) -> bool:
    """Keras reached its cuDNN call for every direction, and PyTorch's cuDNN switch
    (torch.backends.cudnn.enabled, the first thing at::cudnn_is_acceptable reads) was on at
    each such call."""
    import importlib
    import torch
    rnn = importlib.import_module("keras.src.backend.torch.rnn")
    switch, saved = [], {n: getattr(rnn, n) for n in ("_cudnn_lstm", "_cudnn_gru")}

    def noted(fn):
        def call(*args, **kwargs):
            switch.append(torch.backends.cudnn.enabled)
            return fn(*args, **kwargs)
        return call
    for name, fn in saved.items():
        setattr(rnn, name, noted(fn))
    try:
        if getattr(model, "jit_compile", False) is True:  # as Keras's fit() and predict() run
            # it: Dynamo traces Keras's code (its decision is made while tracing; "eager" only
            # skips the compiler after it, which decides nothing here)
            torch._dynamo.reset()
            torch.compile(model, backend="eager")(x)
        else:
            model(x)
    finally:
        for name, fn in saved.items():
            setattr(rnn, name, fn)
    fused = sum(c.startswith("bidirectional") for c in calls)
    return all(switch) and (fused > 0 or len(calls) >= directions)


def judge_cases() -> list[dict]:
    x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")
    out = []
    for name, directions, make in cases():
        model, batch = make(), SAMPLES.get(name, x)
        # The checker first: an unbuilt model must reach it unbuilt. The static reading gets a
        # copy of its own, so that no call of one decides another.
        sample = cudnn_check.check_model(model, sample=batch)
        static = cudnn_check.check_model(make(), probe=False)
        library = library_takes_cudnn(model, batch, directions)
        out.append({"case": name, "library_takes_cudnn": library, "probe": sample.probe,
                    "outside": name in OUTSIDE, "conditions": sample.conditions,
                    "costs": [[f.layer, f.criterion] for f in sample.costs],
                    "sample": [[f.layer, f.criterion] for f in sample],
                    "static": [[f.layer, f.criterion] for f in static]})
    return out


def main() -> int:
    print(json.dumps({"backend": BACKEND, "keras": keras.__version__, "cases": judge_cases()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
