"""cudnn_check.py: will this LSTM/GRU (and every other RNN layer) take cuDNN on a GPU?

Copy this one file into your project. It needs only the standard library and the framework you
use, and it follows the rules of the framework and version you have installed:
  - Keras 3 on its TensorFlow, JAX or PyTorch backend (each backend decides by its own code);
  - Keras 2 (`tf_keras`, or `tf.keras` in TensorFlow <= 2.15): uses Keras's own verdict;
  - PyTorch modules (`nn.LSTM`, `nn.GRU`, `nn.RNN`, the RNN ops a forward calls itself,
    torch.export graphs, and cells or gates run in a Python loop).
TensorFlow is imported only for a TensorFlow-backend or Keras 2 layer.

    from cudnn_check import check_model, check_layer, check_mask, check_module
    findings = check_model(model)      # Keras: [] means every RNN layer is cuDNN-eligible
    findings = check_model(model, sample=x)   # ... decided on a batch of yours
    findings = check_module(module)    # PyTorch: the same for every RNN module it finds
    findings = check_module(module, sample=x)  # ... and every RNN op its forward runs

    python cudnn_check.py MODEL.keras [--sample batch.npz] [--json]
    TF_USE_LEGACY_KERAS=1 python cudnn_check.py MODEL.keras|MODEL.h5   # tf-keras (Keras 2)
    exit 0: every RNN layer is eligible (or there is none), 1: some layer falls back, never
    uses cuDNN (SimpleRNN, ConvLSTM, RNN over a cell, a loop of yours) or depends on the
    padding, 2: error

check_model() asks the library: it calls the model once (on your sample=, else on zeros shaped
from its inputs) with the backend's own decision code believing a GPU is present, and records
which RNN layer calls reach cuDNN, and which layers of yours loop over time steps in Python
(a loop counts as an RNN only where a step uses what an earlier one computed). What decides
outside the layer is asked where the model runs: a device scope or PyTorch's cuDNN switch in
your model's call, the mask it passes, compile(jit_compile=True) on PyTorch; what your code
opens around its own calls elsewhere is listed as a condition. Where it cannot, it says so and
reads the layers' arguments. A finding that only costs (weights outside one buffer) leaves the
call on cuDNN: verdict(findings) says "runs cuDNN, with a cost".
"""
# snippet: timeout=120
from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
import inspect
import json
import os
import sys
import warnings
import zipfile

__all__ = ["Finding", "check_layer", "check_model", "check_mask", "check_module",
           "rnn_layers", "verdict", "main"]

# Where each finding is explained at length (the site of this file).
SITE = "https://cudnn-rnn-guide.github.io/cudnn-rnn-guide/"


@dataclasses.dataclass
class Finding:
    criterion: str  # short id, e.g. "recurrent_dropout"
    message: str  # what is wrong, in words
    fix: str  # what to change
    layer: str = ""  # path of the layer in the model ("" for a mask)
    see: str = ""  # a page of the guide that explains it
    source: str = ""  # "probe": the library's own decision on your model; "static": read from
    #                   the layer's arguments only

    def __str__(self) -> str:
        where = f"{self.layer}: " if self.layer else ""
        more = f" See {self.see}" if self.see else ""
        return f"{where}[{self.criterion}] {self.message} Fix: {self.fix}{more}"

    @property
    def is_cost(self) -> bool:
        """cuDNN still runs; this finding is what it costs (memory, a copy on each call)."""
        return self.criterion in _COSTS


# Findings that leave the call on cuDNN and only make it cost more: PyTorch decides by the input
# alone (at::cudnn_is_acceptable), and copies weights that are not in one buffer on each call.
_COSTS = ("weights_not_flat",)


def verdict(findings) -> str:
    """What findings (of check_layer, check_model or check_module) mean for the call:
    "runs cuDNN" (none), "runs cuDNN, with a cost" (every finding is a cost, such as weights
    outside one buffer), "cannot tell" (the checker could not look) or "does not run cuDNN"."""
    findings = list(findings)
    if all(f.is_cost for f in findings):
        return "runs cuDNN, with a cost" if findings else "runs cuDNN"
    if all(f.is_cost or f.criterion == "cannot_inspect" for f in findings):
        return "cannot tell"
    return "does not run cuDNN"


def _version_tuple(text: str) -> tuple[int, int]:
    parts = (text.split(".") + ["0", "0"])[:2]
    return tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in parts)  # type: ignore


def _flavour(obj) -> tuple[str, tuple[int, int], str]:
    """(kind, (major, minor), backend) for a Keras layer or model object.

    kind is "keras3" or "keras2"; backend is Keras 3's backend ("tensorflow", "jax", "torch",
    ...) or "tensorflow" for Keras 2. A class of yours is judged by the Keras it derives from."""
    module = next((c.__module__ for c in type(obj).__mro__
                   if c.__module__.split(".")[0] in ("keras", "tf_keras", "tensorflow")), "keras")
    if module.startswith("tf_keras"):
        import tf_keras
        return "keras2", _version_tuple(tf_keras.__version__), "tensorflow"
    if module.startswith("tensorflow.python.keras"):  # TF <= 2.5 carried its own Keras 2
        import tensorflow as tf
        return "keras2", _version_tuple(tf.__version__), "tensorflow"
    import keras
    version = _version_tuple(keras.__version__)
    if version[0] < 3:  # the standalone Keras 2 package (TF 2.6 to 2.15)
        return "keras2", version, "tensorflow"
    return "keras3", version, keras.backend.backend()


def _class_names(obj) -> list[str]:
    """The names of the Keras classes the object derives from: a class of yours named LSTM but
    built on keras.layers.RNN is an RNN, not an LSTM."""
    return [c.__name__ for c in type(obj).__mro__
            if c.__module__.split(".")[0] in ("keras", "tf_keras", "tensorflow")]


def _rnn_cells(cell) -> list:
    """The LSTM/GRU cells inside a cell, a StackedRNNCells or a list of cells."""
    return [c for c in _leaf_cells(cell)
            if "LSTMCell" in _class_names(c) or "GRUCell" in _class_names(c)]


def _leaf_cells(cell) -> list:
    """Every cell inside a cell: the cells of a StackedRNNCells or a list, the cell a wrapper
    (tf-keras's DropoutWrapper, ResidualWrapper, ...) holds, else the cell itself."""
    if isinstance(cell, (list, tuple)):
        return [c for sub in cell for c in _leaf_cells(sub)]
    cells = getattr(cell, "cells", None)
    if isinstance(cells, (list, tuple)):
        return _leaf_cells(cells)
    inner = getattr(cell, "cell", None)
    if inner is not None and inner is not cell and _is_cell(inner):
        return _leaf_cells(inner)
    return [cell]


def _cell_text(cell) -> str:
    """LSTMCell, StackedRNNCells(LSTMCell, GRUCell), ResidualWrapper(GRUCell), ..."""
    if isinstance(cell, (list, tuple)):
        return ", ".join(_cell_text(c) for c in cell)
    cells = getattr(cell, "cells", None)
    if isinstance(cells, (list, tuple)):
        return f"{type(cell).__name__}({_cell_text(cells)})"
    inner = getattr(cell, "cell", None)
    if inner is not None and inner is not cell and _is_cell(inner):
        return f"{type(cell).__name__}({_cell_text(inner)})"
    return type(cell).__name__


def _is_cell(obj) -> bool:
    """An RNN cell: a Keras layer that runs one time step and says the size of its state
    (LSTMCell, GRUCell, SimpleRNNCell, ConvLSTMCell, StackedRNNCells, a cell of yours, a cell
    wrapper). An RNN layer is not a cell."""
    if not _class_names(obj) or "RNN" in _class_names(obj):
        return False
    try:
        return getattr(obj, "state_size", None) is not None
    except Exception:  # a cell class that leaves state_size to its subclasses
        return True


def _v1_layer(layer) -> bool:
    """Keras 2's TF 1 LSTM or GRU (tf.compat.v1.keras.layers.LSTM/GRU): Keras's generic loop,
    whatever its arguments. Its module is lstm_v1/gru_v1 (tf-keras, Keras 2.9 to 2.15) or
    recurrent (Keras 2.6 to 2.8, tf.keras in TF <= 2.5); the TF 2 layers live in
    lstm/gru and recurrent_v2."""
    for c in type(layer).__mro__:
        if c.__name__ in ("LSTM", "GRU") and c.__module__.split(".")[0] in (
                "keras", "tf_keras", "tensorflow"):
            return c.__module__.endswith(("_v1", ".recurrent"))
    return False


def _kind(layer) -> str | None:
    """What kind of recurrent layer this is:
    "lstm", "gru": Keras's LSTM and GRU layers, which can take cuDNN;
    "cudnn": Keras 2's CuDNNLSTM and CuDNNGRU, which run only on cuDNN;
    "rnn": any other layer built on Keras's RNN (SimpleRNN, ConvLSTM1D/2D/3D, RNN over any
    cell, Keras 2's TF 1 LSTM and GRU, an RNN class of yours), which never takes cuDNN;
    "cell": a cell (one time step per call) that some code of yours calls;
    None: not a recurrent layer (a wrapper, a model, any other layer)."""
    names = _class_names(layer)
    if "_CuDNNRNN" in names:
        return "cudnn"
    if "RNN" in names and "LSTM" in names and not _v1_layer(layer):
        return "lstm"
    if "RNN" in names and "GRU" in names and not _v1_layer(layer):
        return "gru"
    if "RNN" in names or "ConvRNN" in names:
        return "rnn"
    if _is_cell(layer):
        return "cell"
    return None


def _name(fn) -> str:
    return getattr(fn, "__name__", repr(fn))


class _Findings(list):
    """Findings of one layer; check_layer() fills in the layer's path."""
    def add(self, criterion, message, fix, see=""):
        self.append(Finding(criterion, message, fix, "", see))


# Which releases made each old argument the default (the keras tags' layers/recurrent.py).
_OLD_DEFAULTS = {"hard_sigmoid": "Keras 2.2 or older and tf.keras in TensorFlow 1.x",
                 "reset_after=False": "Keras 2.1.5 to 2.3.1 and tf.keras in TensorFlow 1.x"}


def _old_default(what: str) -> str:
    return (f" Models built with {_OLD_DEFAULTS[what]} got {what} by default and keep it when "
            "loaded.")


# ------------------------------------------------------------------------------ Keras 2
def _keras2_reasons(layer, kind: str) -> _Findings:
    """Which of Keras 2's criteria the layer breaks (tf_keras/src/layers/rnn/lstm.py and gru.py
    compute `_could_use_gpu_kernel` from exactly these)."""
    import tensorflow as tf
    try:
        import tf_keras as k2
    except ImportError:  # TF <= 2.15: tf.keras is Keras 2
        k2 = tf.keras
    cell, out = layer.cell, _Findings()
    if cell.activation not in (k2.activations.tanh, tf.tanh):
        out.add("activation", f"activation is {_name(cell.activation)}, not Keras's own tanh "
                "(an identity test: a function that computes tanh is not enough).",
                'Use activation="tanh" (the default).')
    if cell.recurrent_activation not in (k2.activations.sigmoid, tf.sigmoid):
        old = _name(cell.recurrent_activation) == "hard_sigmoid"
        out.add("recurrent_activation", f"recurrent_activation is "
                f"{_name(cell.recurrent_activation)}, not Keras's own sigmoid."
                + (_old_default("hard_sigmoid") if old else ""),
                'Use recurrent_activation="sigmoid" (the default since TF 2.0), then retrain '
                "or fine-tune.", SITE + "legacy/#old-defaults" if old else "")
    if cell.recurrent_dropout:
        out.add("recurrent_dropout", f"recurrent_dropout={cell.recurrent_dropout:g}: cuDNN has "
                "no dropout between time steps.", "Set recurrent_dropout=0; regularise with "
                "dropout= or a Dropout layer after the RNN instead.")
    if layer.unroll:
        out.add("unroll", "unroll=True: cuDNN runs the loop itself.", "Set unroll=False.")
    if not cell.use_bias:
        out.add("use_bias", "use_bias=False: the cuDNN kernel always has biases.",
                "Set use_bias=True.")
    if kind == "gru" and not cell.reset_after:
        out.add("reset_after", "reset_after=False: cuDNN's GRU applies the reset gate after "
                "the matrix product." + _old_default("reset_after=False"),
                "Set reset_after=True (the default since TF 2.0), then retrain or fine-tune.",
                SITE + "legacy/#old-defaults")
    if not tf.compat.v1.executing_eagerly_outside_functions():
        out.add("eager", "eager execution is disabled (tf.compat.v1.disable_eager_execution()): "
                "Keras 2 then never uses cuDNN.", "Remove disable_eager_execution().")
    return out


def _keras2_findings(layer, kind: str) -> _Findings:
    """Keras 2 keeps its own verdict on the layer, `_could_use_gpu_kernel`: use it, and explain
    it with the criteria it is made of."""
    reasons = _keras2_reasons(layer, kind)
    verdict = getattr(layer, "_could_use_gpu_kernel", None)
    if verdict is None:  # not stored by this Keras 2 version: our reasons are all we have
        return reasons
    if verdict:
        return _Findings()
    if not reasons:
        reasons.add("keras2_verdict", "Keras says this layer cannot use cuDNN "
                    "(_could_use_gpu_kernel is False) for a reason this checker does not know.",
                    "Compare the layer's arguments with the defaults.")
    return reasons


# ------------------------------------------------------------------------------ Keras 3
def _keras3_activations(backend: str):
    """The functions each backend's cudnn_ok() accepts (keras/src/backend/*/rnn.py)."""
    from keras import activations, ops
    if backend == "tensorflow":
        import tensorflow as tf
        return ((activations.tanh, tf.tanh, ops.tanh),
                (activations.sigmoid, tf.sigmoid, ops.sigmoid))
    if backend == "jax":
        import jax.numpy as jnp
        return (activations.tanh, jnp.tanh, ops.tanh), (activations.sigmoid, ops.sigmoid)
    import torch
    return ((activations.tanh, torch.tanh, ops.tanh),
            (activations.sigmoid, torch.sigmoid, ops.sigmoid))


_BACKEND_NAMES = {"tensorflow": "TensorFlow", "jax": "JAX", "torch": "PyTorch"}


def _keras3_findings(layer, kind: str, version: tuple[int, int], backend: str) -> _Findings:
    cell, out = layer.cell, _Findings()
    label = f"Keras {version[0]}.{version[1]} on the {_BACKEND_NAMES.get(backend, backend)} backend"

    # The layer's own gate (LSTM/GRU.inner_loop), the same on every backend.
    use_cudnn = getattr(layer, "use_cudnn", "auto")  # the argument exists since Keras 3.2
    if use_cudnn not in ("auto", True):  # Keras's own test: `in`, so 0 counts as False
        out.add("use_cudnn", f"use_cudnn={use_cudnn!r}: you opted out of cuDNN.",
                'Set use_cudnn="auto" (or True to get an error instead of a silent fallback '
                "where the backend raises one).")
    if cell.recurrent_dropout:
        out.add("recurrent_dropout", f"recurrent_dropout={cell.recurrent_dropout:g}: cuDNN has "
                "no dropout between time steps.", "Set recurrent_dropout=0; regularise with "
                "dropout= or a Dropout layer after the RNN instead.")
    if version < (3, 4) and cell.dropout:
        out.add("dropout", f"dropout={cell.dropout:g}: Keras {version[0]}.{version[1]} takes the "
                "generic kernel for any dropout (fixed in 3.4).",
                "Upgrade to Keras >= 3.9, or set dropout=0 and add a Dropout layer before the RNN.")

    # The backend's gate (keras/src/backend/<backend>/rnn.py).
    if backend not in _BACKEND_NAMES:
        out.add("backend", f"{label}: this backend has no cuDNN path.",
                "Use the TensorFlow, JAX (LSTM only) or PyTorch backend.")
        return out
    if backend == "jax" and version < (3, 14):
        out.add("backend_version", f"{label}: no cuDNN path before Keras 3.14.",
                "Upgrade to Keras >= 3.14 (cuDNN LSTM on JAX).")
        return out
    if backend == "jax" and kind == "gru":
        out.add("jax_gru", f"{label}: GRU never uses cuDNN (jax.experimental.rnn has an LSTM "
                "only; Keras runs the GRU as a lax.scan loop).",
                "Use an LSTM, or the TensorFlow or PyTorch backend for a cuDNN GRU.")
        return out
    if backend == "torch":
        # Where the backend fails (NotImplementedError), the layer raises its ValueError when
        # asked for cuDNN (`use_cudnn is True` in LSTM/GRU.inner_loop): keras-team/keras#22274.
        # 3.14 catches the failure of its cuDNN LSTM inside the backend (keras-team/keras#22279).
        asked = getattr(layer, "use_cudnn", "auto") is True
        raises = (', and with use_cudnn=True the layer raises "use_cudnn=True was specified, but '
                  'cuDNN is not supported..." (keras-team/keras#22274)')
        if version < (3, 10) or (kind == "gru" and version < (3, 14)):
            out.add("backend_version", f"{label}: no cuDNN {kind.upper()} path in this version"
                    + (raises if asked else "") + ".", "Upgrade to Keras >= 3.15.")
            return out
        if kind == "lstm" and version < (3, 15):
            out.add("backend_version", f"{label}: Keras's cuDNN LSTM function fails on every "
                    "call" + (raises if asked and version < (3, 14)
                              else " and Keras falls back in silence")
                    + " (3.10 to 3.13 convert the weights with NumPy; 3.14 unpacks PyTorch's "
                    "result wrongly; keras-team/keras#22874 fixed it in 3.15).",
                    "Upgrade to Keras >= 3.15.")
            return out
    tanhs, sigmoids = _keras3_activations(backend)
    if cell.activation not in tanhs:
        out.add("activation", f"activation is {_name(cell.activation)}, not one of the tanh "
                f"functions the {_BACKEND_NAMES[backend]} backend accepts (an identity test: a "
                "function that computes tanh is not enough).", 'Use activation="tanh" (the default).')
    if cell.recurrent_activation not in sigmoids:
        old = _name(cell.recurrent_activation) == "hard_sigmoid"
        out.add("recurrent_activation", f"recurrent_activation is "
                f"{_name(cell.recurrent_activation)}, not one of the sigmoid functions the "
                f"{_BACKEND_NAMES[backend]} backend accepts."
                + (_old_default("hard_sigmoid") if old else ""),
                'Use recurrent_activation="sigmoid" (the default).'
                + (" Then retrain or fine-tune." if old else ""),
                SITE + "legacy/#old-defaults" if old else "")
    if layer.unroll:
        out.add("unroll", "unroll=True: cuDNN runs the loop itself.", "Set unroll=False.")
    if not cell.use_bias:
        out.add("use_bias", "use_bias=False: the cuDNN kernel always has biases.",
                "Set use_bias=True.")
    if kind == "gru" and not cell.reset_after:
        out.add("reset_after", "reset_after=False: cuDNN's GRU applies the reset gate after "
                "the matrix product." + _old_default("reset_after=False"),
                "Set reset_after=True (the default), then retrain or fine-tune.",
                SITE + "legacy/#old-defaults")
    return out


# ------------------------------------------------------------------------------ layers
def check_layer(layer, path: str = "") -> list[Finding]:
    """One Finding per cuDNN criterion the layer breaks; [] means it takes cuDNN on a GPU
    (with the installed framework, version and, for Keras 3, backend)."""
    path = path or getattr(layer, "name", "")
    kind = _kind(layer)
    if kind is None:  # a wrapper (Bidirectional, TimeDistributed) or a model: its RNN layers
        found = [(p, sub, check_layer(sub, p)) for p, sub in rnn_layers(layer, path)]
        if found and not found[0][2] and _fused_bidirectional(layer):
            return []  # one fused cuDNN call runs both directions, whatever the backward's unroll
        return [f for *_, fs in found for f in fs]
    if kind == "rnn":
        return [_never_finding(layer, path)]
    if kind == "cell":
        return [_cell_finding(layer, path)]
    if kind == "cudnn":
        return []  # CuDNNLSTM and CuDNNGRU have no other kernel: on a GPU they run cuDNN
    flavour, version, backend = _flavour(layer)
    if flavour == "keras2":
        found = _keras2_findings(layer, kind)
    else:
        found = _keras3_findings(layer, kind, version, backend)
    for f in found:
        f.layer = path
    return list(found)


def _cudnn_layers(layer) -> str:
    """The layers with a cuDNN path in the Keras the layer belongs to."""
    flavour, version, backend = _flavour(layer)
    if flavour == "keras2":
        return "tf.keras.layers.LSTM or GRU"
    if backend == "jax":
        return "keras.layers.LSTM (the JAX backend has no cuDNN GRU)"
    return "keras.layers.LSTM or GRU"


def _never_finding(layer, path: str) -> Finding:
    """Why a layer built on Keras's RNN, other than its LSTM and GRU, never takes cuDNN."""
    names, cls, layers = _class_names(layer), type(layer).__name__, _cudnn_layers(layer)
    if "SimpleRNN" in names:
        return Finding("simple_rnn", f"{cls} never uses cuDNN: Keras has no cuDNN path for "
                       "SimpleRNN (only its LSTM and GRU layers have one), so it runs the generic "
                       "loop, one time step at a time.", f"Where GPU speed matters, use {layers} "
                       "(a different layer: train it again).", path)
    if "ConvRNN" in names or any(n.startswith("ConvLSTM") for n in names):
        return Finding("conv_rnn", f"{cls} never uses cuDNN's RNN kernel: Keras runs the generic "
                       "loop over time steps, with convolutions inside each step.", "No Keras "
                       "layer runs a convolutional LSTM on cuDNN's RNN kernel; to use it, convolve "
                       "each frame (TimeDistributed), flatten, and run " + layers + " over the "
                       "features (a different model: train it again).", path)
    if _v1_layer(layer):
        base = "LSTM" if "LSTM" in names else "GRU"
        return Finding("v1_layer", f"{cls} is TensorFlow 1's layer (tf.compat.v1.keras.layers."
                       f"{base}): it never uses cuDNN, whatever its arguments.", f"Use "
                       f"tf.keras.layers.{base}, the TensorFlow 2 layer, with its default "
                       "arguments.", path)
    cell = getattr(layer, "cell", None)
    leaves = _leaf_cells(cell) if cell is not None else []
    standard = bool(leaves) and len(_rnn_cells(cell)) == len(leaves)
    return Finding("generic_rnn", f"{cls}({_cell_text(cell) if cell is not None else ''}) never "
                   "uses cuDNN: Keras runs a cell in its generic loop, one time step at a time; "
                   "only the LSTM and GRU layers have a cuDNN path.",
                   "Use keras.layers.LSTM(...) or GRU(...) instead of RNN(...Cell(...)); stack "
                   "layers, not cells." if standard else "If the cell computes an LSTM or GRU "
                   f"step, use {layers} instead; no other cell has a cuDNN kernel in Keras.", path)


def _cell_finding(cell, path: str, how: str = "used on its own") -> Finding:
    """A cell that some code of yours calls: one time step per call."""
    standard = len(_rnn_cells(cell)) == len(_leaf_cells(cell))
    return Finding("cell_loop", f"{type(cell).__name__} {how}: a cell runs one time step per "
                   "call, never through cuDNN.", "Use the LSTM or GRU layer over the whole "
                   "sequence." if standard else "Only the LSTM and GRU layers have a cuDNN path: "
                   f"if the cell computes an LSTM or GRU step, use {_cudnn_layers(cell)} over "
                   "the whole sequence.", path)


def _fused_bidirectional(layer) -> bool:
    """Does this Bidirectional run both directions in one fused call? Keras >= 3.15 does so on
    JAX (LSTM) and PyTorch (LSTM, GRU) when its own test passes (_can_attempt_fused_lstm/_gru:
    no mask, the same activations, no dropout, ...); the call is then decided by the forward
    layer's arguments, so it reaches cuDNN exactly when the forward layer alone would."""
    fwd, bwd = getattr(layer, "forward_layer", None), getattr(layer, "backward_layer", None)
    kind = _kind(fwd) if fwd is not None else None
    test = getattr(layer, f"_can_attempt_fused_{kind}", None)
    if test is None or _kind(bwd) != kind:
        return False
    flavour, _, backend = _flavour(layer)
    if flavour != "keras3" or backend not in ("jax", "torch"):  # TensorFlow: no fused call
        return False
    built = fwd.built, bwd.built
    try:  # Keras builds both directions before it calls the test; ask it as it will be asked
        fwd.built = bwd.built = True
        return bool(test(None))
    finally:
        fwd.built, bwd.built = built


def _children(layer):
    """The sub-layers Keras itself tracks on this layer (attributes of custom layers too). A
    Bidirectional runs its two copies, never the layer it was given (which Keras 3.2 still
    tracks beside them)."""
    pair = [getattr(layer, "forward_layer", None), getattr(layer, "backward_layer", None)]
    if all(pair):
        return pair
    flatten = getattr(layer, "_flatten_layers", None)
    if flatten is None:
        return []
    return list(flatten(include_self=False, recursive=False))


def rnn_layers(model, path: str | None = None, _seen: set | None = None):
    """Every (path, layer) that is a recurrent layer (an LSTM, a GRU, any other layer built on
    Keras's RNN, Keras 2's CuDNNLSTM/CuDNNGRU) or a loose cell, wherever Keras's layer tracking
    finds it (wrappers, nested models, custom layers). A cell that an RNN layer runs belongs to
    that layer, even where a layer of yours tracks it too."""
    top = _seen is None
    path = model.name if path is None else path
    seen = set() if _seen is None else _seen
    found = []
    for child in _children(model):
        if id(child) in seen:  # a shared layer is reported once
            continue
        seen.add(id(child))
        child_path = f"{path}/{child.name}"
        if _kind(child) is not None:
            found.append((child_path, child))  # its cell belongs to it: do not look inside
        else:
            found.extend(rnn_layers(child, child_path, seen))
    if top:
        owned = {id(c) for _, layer in found if _kind(layer) != "cell"
                 for c in _cells_of(getattr(layer, "cell", None))}
        found = [(p, layer) for p, layer in found if id(layer) not in owned]
    return found


def _cells_of(cell) -> list:
    """The cell and every cell inside it (stacked, wrapped)."""
    if cell is None:
        return []
    if isinstance(cell, (list, tuple)):
        return [c for sub in cell for c in _cells_of(sub)]
    inner = getattr(cell, "cells", None)
    inner = inner if isinstance(inner, (list, tuple)) else [getattr(cell, "cell", None)]
    return [cell] + [c for sub in inner if sub is not None and sub is not cell
                     for c in _cells_of(sub)]


def _bidirectionals(model, _seen: set | None = None) -> list:
    """Every Bidirectional wrapper in the model (the model itself included), as Keras tracks
    them."""
    seen = set() if _seen is None else _seen
    found = [model] if _kind(model) is None and len(_children(model)) == 2 and \
        getattr(model, "forward_layer", None) is not None else []
    for child in _children(model):
        if id(child) not in seen and _kind(child) is None:
            seen.add(id(child))
            found.extend(_bidirectionals(child, seen))
    return found


def _default_backend() -> str:
    import keras
    if _version_tuple(keras.__version__)[0] < 3:
        return "tf_keras"
    return keras.backend.backend()


def check_mask(mask, padding_value=None, backend: str | None = None) -> list[Finding]:
    """Is this mask acceptable to cuDNN? Pass a boolean mask (batch, time), or a padded batch
    (batch, time[, features]) with the padding_value it was padded with. `backend` is Keras 3's
    backend ("tensorflow", "jax", "torch") or "tf_keras" for Keras 2; by default the backend
    Keras is configured with."""
    import numpy as np
    backend = backend or _default_backend()
    data = np.asarray(mask)
    if padding_value is not None:
        keep = data != padding_value
        mask_ = keep if keep.ndim == 2 else keep.any(axis=tuple(range(2, keep.ndim)))
    else:
        if data.ndim != 2:
            raise ValueError(f"a mask must have shape (batch, time), got shape {data.shape}")
        mask_ = data.astype(bool)
    if backend in ("jax", "torch"):
        return [Finding("mask", f"the {_BACKEND_NAMES[backend]} backend takes the generic kernel "
                        "for any mask, even a right-padded one.", "Drop the mask where you can "
                        "(equal-length batches, e.g. bucketing by length), or use the "
                        "TensorFlow backend.")]
    if backend == "tensorflow":
        import keras
        version = _version_tuple(keras.__version__)
        if (3, 0) <= version < (3, 2):
            return [Finding("mask", f"Keras {version[0]}.{version[1]} on the TensorFlow backend "
                            "takes the generic kernel for any mask; right-padded masks reach "
                            "cuDNN from Keras 3.2.", "Upgrade to Keras >= 3.2 and pad at the "
                            'end (padding="post").')]
    out: list[Finding] = []
    lengths = mask_.sum(axis=1)
    right = np.arange(mask_.shape[1])[None, :] < lengths[:, None]
    bad_rows = np.flatnonzero((mask_ != right).any(axis=1))
    if bad_rows.size:
        out.append(Finding("mask_right_padded", f"rows {bad_rows[:5].tolist()} are not "
                           "right-padded (padding before or between real steps).",
                           'Pad at the end: pad_sequences(..., padding="post").'))
    empty_rows = np.flatnonzero(lengths == 0)
    if empty_rows.size:
        out.append(Finding("mask_fully_masked", f"rows {empty_rows[:5].tolist()} are fully "
                           "masked (no real step).", "Drop empty sequences from the batch."))
    return out


# ------------------------------------------------------------------------------ PyTorch
# The aten ops PyTorch runs RNNs with (aten/src/ATen/native/RNN.cpp). A fused op takes cuDNN
# when at::cudnn_is_acceptable(input) holds (torch.cudnn_is_acceptable in Python); a cell op
# runs one time step; the quantized ops run int8 CPU kernels.
_FUSED_OPS = ("lstm", "gru", "rnn_tanh", "rnn_relu")
_CELL_OPS = ("lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell")
_QUANTIZED_OPS = ("quantized_lstm", "quantized_gru", "quantized_lstm_cell",
                  "quantized_gru_cell", "quantized_rnn_tanh_cell", "quantized_rnn_relu_cell")


def _aten_name(fn) -> str:
    """"lstm" for torch.lstm, torch._VF.lstm and torch.ops.aten.lstm(.input); "" for what is
    not an aten op."""
    import torch
    qualified = (getattr(getattr(fn, "_schema", None), "name", None)
                 or getattr(fn, "_qualified_op_name", None))
    if isinstance(qualified, str):
        namespace, _, name = qualified.partition("::")
        return name if namespace == "aten" else ""
    name = getattr(fn, "__name__", "")
    return name if name and getattr(torch._C._VariableFunctions, name, None) is fn else ""


def _gate_name(fn) -> str:
    """"sigmoid", "tanh" or "relu" for those functions, methods and aten ops (the gates of a
    hand-written LSTM or GRU, the step of a hand-written RNN); "" otherwise."""
    name = (_aten_name(fn) or (fn if isinstance(fn, str) else getattr(fn, "__name__", "")))
    name = name.rstrip("_")
    return name if name in ("sigmoid", "tanh", "relu") else ""


class _TensorInfo:
    """What a graph records of a tensor: its device and dtype, no data."""
    def __init__(self, device, dtype):
        self.device, self.dtype = device, dtype

    def untyped_storage(self):
        return self

    def data_ptr(self):
        return 0


@dataclasses.dataclass
class _RNNCall:
    """An RNN op a forward ran (or a graph calls) outside the RNN modules read by class, or a
    loop over gates. `tensor` stands in for the input (its parameters where known);
    `acceptable`: PyTorch's own torch.cudnn_is_acceptable(input), where the op ran."""
    op: str  # "lstm", "lstm_cell", "quantized_lstm", ... or "loop"
    tensor: object = None
    acceptable: bool | None = None
    what: str = ""  # for a loop: what was called again and again
    step: str = ""  # for a loop of a plain RNN step: "tanh" or "relu" ("" for gates)

    def finding(self, path: str) -> Finding:
        if self.op == "cudnn_disabled":
            return _outside_finding("cudnn_disabled", "torch.backends.cudnn.enabled", path)
        if self.op == "loop" and self.step:
            return Finding("gate_loop", f"{self.what}, feeding each step's result to the next, "
                           f"with a {self.step} step and no fused RNN op: a Python loop over time "
                           "steps, which never uses cuDNN.", "Run the whole sequence through "
                           f"nn.RNN(..., nonlinearity='{self.step}') (one call; PyTorch runs it "
                           "on cuDNN).", path)
        if self.op == "loop":
            return Finding("gate_loop", f"{self.what}, with sigmoid and tanh gates and no fused "
                           "RNN op: a Python loop over time steps, which never uses cuDNN.",
                           "Run the whole sequence through nn.LSTM or nn.GRU (one call).", path)
        if self.op in _QUANTIZED_OPS:
            return Finding("quantized", f"calls aten::{self.op}: PyTorch's quantized CPU "
                           "kernels, never cuDNN.", "Keep a float RNN for the GPU.", path)
        whole = {"lstm_cell": "nn.LSTM", "gru_cell": "nn.GRU"}.get(self.op, "nn.RNN")
        return Finding("cell_loop", f"calls torch.{self.op}, one time step per call, so a loop "
                       "over it never uses cuDNN.", f"Run the whole sequence through {whole}.",
                       path)


def _read_by_class(m) -> bool:
    """check_module reads this module by its class: what runs inside it is judged there."""
    from torch import nn
    import torch
    cls = getattr(m, "original_name", None) if isinstance(m, torch.jit.ScriptModule) else None
    name = cls or type(m).__name__
    return isinstance(m, (nn.RNNBase, nn.RNNCellBase)) or (
        name in ("LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell")
        and (isinstance(m, torch.jit.ScriptModule)
             or type(m).__module__.startswith(("torch.ao.nn", "torch.nn.quantiz"))))


def _first_tensor(items):
    """The first tensor in a list of parameters (the op's weights), else None."""
    for item in items if isinstance(items, (list, tuple)) else ():
        if hasattr(item, "device") and hasattr(item, "dtype"):
            return item
    return None


class _Events(list):
    """What one forward (or graph) did, in order: [key, gates] for each call of a submodule or
    use of a parameter, with the sigmoid/tanh gates that ran after it."""
    def use(self, key):
        self.append([key, set()])

    def gate(self, name):
        if self:
            self[-1][1].add(name)

    def loop(self, recurrent=frozenset()):
        """(key, count, step) where the same submodule or parameter, one in `recurrent` (what
        it computes feeds its next use: a recurrence), starts two or more stretches that each
        run sigmoid and tanh gates (step "") or a tanh or relu step (step "tanh" or "relu"):
        one time step each. None otherwise: a loop whose steps do not feed each other (a
        layer per frame, a gated score per step) is not an RNN."""
        starts: dict = {}
        for i, (key, _) in enumerate(self):
            starts.setdefault(key, []).append(i)
        for key, at in starts.items():
            bounds = at + [len(self)]
            gates = [set().union(*(g for _, g in self[a:b])) for a, b in zip(bounds, bounds[1:])]
            if len(at) > 1 and key in recurrent and all({"sigmoid", "tanh"} <= g for g in gates):
                return key, len(at), ""
        for key, at in starts.items():
            bounds = at + [len(self)]
            gates = [set().union(*(g for _, g in self[a:b])) for a, b in zip(bounds, bounds[1:])]
            for step in ("tanh", "relu"):
                if len(at) > 1 and key in recurrent and all(step in g for g in gates):
                    return key, len(at), step
        return None


class _Lineage:
    """Which submodules and parameters each tensor of a forward was computed from, so that a
    loop whose step feeds the next (a recurrence) can be told from a loop over independent
    items."""
    def __init__(self):
        self.of: dict[int, frozenset] = {}
        self.keep: list = []  # the tensors seen, alive while the forward runs (ids stay theirs)
        self.recurrent: set = set()

    @staticmethod
    def tensors(items):
        import torch
        out = []
        for item in items:
            if isinstance(item, torch.Tensor):
                out.append(item)
            elif isinstance(item, (list, tuple)):
                out.extend(x for x in item if isinstance(x, torch.Tensor))
            elif isinstance(item, dict):
                out.extend(x for x in item.values() if isinstance(x, torch.Tensor))
        return out

    def sources(self, items) -> frozenset:
        return frozenset().union(*(self.of.get(id(t), frozenset())
                                   for t in self.tensors(items)))

    def uses(self, key, items):
        """`key` (a module called, a parameter used) takes `items`: a recurrence where they
        were computed from it."""
        if key in self.sources(items):
            self.recurrent.add(key)

    def made(self, outputs, sources: frozenset):
        for t in self.tensors([outputs] if not isinstance(outputs, (list, tuple)) else outputs):
            self.of[id(t)] = self.of.get(id(t), frozenset()) | sources
            self.keep.append(t)


class _Frame:
    """One module call in progress."""
    def __init__(self, module):
        self.module, self.events, self.gates = module, _Events(), set()


def _run_forward(module, sample, where) -> list:
    """Call module(sample) once (eval mode, no gradients, training flags restored) and record
    what its forward runs: [(path, _RNNCall)] for every RNN op outside the modules read by
    class (torch.lstm, torch._VF.lstm, cell ops, quantized ops) and every loop over gates.
    `where(m)`: the path of a module. Raises what the forward raises."""
    import torch
    from torch import nn
    from torch.nn.modules import module as nn_module
    from torch.overrides import TorchFunctionMode

    stack: list[_Frame] = []
    found: list = []
    ops = _FUSED_OPS + _CELL_OPS + _QUANTIZED_OPS
    lineage = _Lineage()

    def enter(m, args):
        if isinstance(m, nn.RNNBase) and not torch.backends.cudnn.enabled:  # a context of yours
            found.append((where(m), _RNNCall("cudnn_disabled")))  # around the call, in forward
        if stack and not _read_by_class(m):
            stack[-1].events.use(("module", id(m)))
        lineage.uses(("module", id(m)), args)
        stack.append(_Frame(m))

    def gate(frame, name):
        frame.gates.add(name)
        frame.events.gate(name)

    def leave(m, args, output):
        if not stack or stack[-1].module is not m:
            return
        frame = stack.pop()
        lineage.made(output, frozenset([("module", id(m))]))
        for name in frame.gates if stack else ():
            gate(stack[-1], name)
        loop = None if _read_by_class(m) else frame.events.loop(lineage.recurrent)
        if loop:
            (kind, key), count, step = loop
            what = (f"calls {names.get(key, 'a submodule')}" if kind == "module"
                    else "uses one of its parameters")
            found.append((where(m), _RNNCall("loop", what=f"{type(m).__name__}.forward {what} "
                                             f"{count} times", step=step)))

    class Recorder(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            params = [("parameter", id(a)) for a in list(args) + [
                x for a in args if isinstance(a, (list, tuple)) for x in a]
                if isinstance(a, nn.Parameter)]
            for key in params:
                lineage.uses(key, list(args) + list(kwargs.values()))
            if stack:
                frame = stack[-1]
                for key in params:
                    frame.events.use(key)
                if _gate_name(func):
                    gate(frame, _gate_name(func))
                op = _aten_name(func)
                if op in ops and not _read_by_class(frame.module) and args:
                    params = next((a for a in args[1:] if isinstance(a, (list, tuple)) and
                                   len(a) > 2), ())
                    inputs, weight = args[0], _first_tensor(params)
                    acceptable = (bool(torch.cudnn_is_acceptable(inputs))
                                  if op in _FUSED_OPS and isinstance(inputs, torch.Tensor) else None)
                    found.append((where(frame.module), _RNNCall(
                        op, inputs if weight is None else weight, acceptable)))
                    if op in _FUSED_OPS and not torch.backends.cudnn.enabled:
                        found.append((where(frame.module), _RNNCall("cudnn_disabled")))
            out = func(*args, **kwargs)
            lineage.made(out, lineage.sources(list(args) + list(kwargs.values()))
                         | frozenset(params))
            return out

    names = {id(m): f"{type(m).__name__} ({where(m)})" for m in module.modules()}
    training = [(m, m.training) for m in module.modules()]
    args = sample if isinstance(sample, tuple) else (sample,)
    kwargs = sample if isinstance(sample, dict) else {}
    hooks = [nn_module.register_module_forward_pre_hook(enter),
             nn_module.register_module_forward_hook(leave, always_call=True)]
    try:
        module.eval()
        with torch.no_grad(), Recorder():
            module(**kwargs) if kwargs else module(*args)
    finally:
        for hook in hooks:
            hook.remove()
        for m, flag in training:
            m.training = flag
    return found


def _graph_calls(graph_module, top: str) -> list:
    """[(path, _RNNCall)] for the RNN ops in an FX graph (torch.export's ExportedProgram
    .module(), torch.fx.symbolic_trace), and a loop over gates where the same weights serve
    one op again and again beside sigmoid and tanh gates."""
    import functools as ft
    from torch import nn
    found, events, fused = [], _Events(), False
    lineage: dict = {}  # node: the keys (modules, weights) it was computed from
    recurrent: set = set()

    def fetch(node):  # a get_attr node's tensor
        try:
            return ft.reduce(getattr, node.target.split("."), graph_module)
        except AttributeError:
            return None

    def uses(node, keys):
        sources = frozenset().union(*(lineage.get(n, frozenset())
                                      for n in node.all_input_nodes))
        recurrent.update(k for k in keys if k in sources)
        lineage[node] = sources | frozenset(keys)

    for node in graph_module.graph.nodes:
        if node.op == "call_module":
            sub = fetch(node)
            fused = fused or _read_by_class(sub)
            if not _read_by_class(sub):
                events.use(("module", node.target))
            uses(node, [("module", node.target)])
            gate = {nn.Sigmoid: "sigmoid", nn.Tanh: "tanh", nn.ReLU: "relu"}.get(type(sub))
            if gate:
                events.gate(gate)
            continue
        if node.op not in ("call_function", "call_method"):
            continue
        name = _aten_name(node.target) or getattr(node.target, "__name__", str(node.target))
        keys = [(name, arg.target) for arg in node.args if getattr(arg, "op", None) == "get_attr"]
        for key in keys:
            events.use(key)
        uses(node, keys)
        if _gate_name(node.target):
            events.gate(_gate_name(node.target))
        op = _aten_name(node.target) if node.op == "call_function" else ""
        if op not in _FUSED_OPS + _CELL_OPS + _QUANTIZED_OPS:
            continue
        fused = True
        stack = node.meta.get("nn_module_stack") or {}
        path = (list(stack.values())[-1][0] if stack else "") or top
        params = next((a for a in node.args[1:] if isinstance(a, (list, tuple)) and len(a) > 2),
                      ())
        tensor = None
        for arg in list(params) + [node.args[0]]:
            value = arg.meta.get("val") if hasattr(arg, "meta") else None
            value = value if value is not None else (
                fetch(arg) if getattr(arg, "op", None) == "get_attr" else None)
            if value is not None and hasattr(value, "device"):
                tensor = _TensorInfo(value.device, value.dtype)
                break
        found.append((path, _RNNCall(op, tensor)))
    loop = None if fused else events.loop(recurrent)
    if loop:
        (kind, target), count, step = loop
        what = (f"the graph calls {target} {count} times" if kind == "module" else
                f"the graph's {kind} uses {target} {count} times")
        found.append((top, _RNNCall("loop", what=what, step=step)))
    return found


def _calls_of(module, sample, top, where) -> tuple[list, str]:
    """What the module's forward runs: ([(path, _RNNCall)], "" or why it could not look).
    A graph is read; a sample is run; otherwise forward is traced with torch.fx."""
    import warnings as w
    import torch
    module = getattr(module, "_orig_mod", module)  # torch.compile's wrapper: the module inside
    if isinstance(module, torch.fx.GraphModule):
        return _graph_calls(module, top), ""
    if sample is not None:
        try:
            return _run_forward(module, sample, lambda m: where.get(id(m)) or
                                f"{type(m).__name__} (outside the module tree)"), ""
        except Exception as exc:  # the reader's module: anything can go wrong
            return [], f"forward could not run on your sample ({type(exc).__name__}: " \
                f"{_first_line(exc)[:160]})"
    if _read_by_class(module) or isinstance(module, torch.jit.ScriptModule):
        return [], ""  # read by class, or by its scripted graph below
    try:
        with w.catch_warnings():
            w.simplefilter("ignore")
            traced = torch.fx.symbolic_trace(module)
    except Exception as exc:  # control flow on the input, a missing forward, ...
        return [], f"torch.fx could not trace its forward without an input ({type(exc).__name__}" \
            f": {_first_line(exc)[:160]})"
    return _graph_calls(traced, top), ""


def check_module(module, sample=None) -> list[Finding]:
    """Findings for every RNN a PyTorch module runs: every nn.LSTM, nn.GRU and nn.RNN; every
    cell (nn.LSTMCell, nn.GRUCell, nn.RNNCell, torch.lstm_cell), which some Python loop calls
    step by step; every RNN op a forward calls itself (torch.lstm, torch._VF.lstm); and loops
    over hand-written gates (torch.ao.nn.quantizable.LSTM is one) or over a hand-written RNN
    step (tanh or relu, each step feeding the next). It sees through
    torch.jit.script and torch.jit.trace (their submodules keep the original class), reads
    the graph of a torch.export ExportedProgram (or its .module()) and of torch.fx, flags
    quantized RNNs (never cuDNN) and RNNs kept in a plain list, dict or tuple outside the
    registered module tree, and says "cannot inspect" where it cannot look.

    sample: one batch of your inputs (a tensor, a tuple of forward's arguments, or a dict of
    keyword arguments). With it, check_module runs forward once and records the ops it calls
    (and PyTorch's own test of each RNN op's input, torch.cudnn_is_acceptable); without it, it
    traces forward with torch.fx where it can.

    PyTorch decides per call, in C++ (aten/src/ATen/native/RNN.cpp, use_cudnn): the input is
    a CUDA tensor, cuDNN is enabled, and the dtype is float16, float32 or float64 (bfloat16
    only where PyTorch allows it). bias=False, proj_size, dropout, bidirectional and packed
    sequences all still run on cuDNN. The parameters stand in for the input here: they must
    be on the same device. A finding that is only a cost (Finding.is_cost: weights outside one
    buffer) leaves the call on cuDNN; verdict(findings) says which."""
    import torch
    from torch import nn

    exported = getattr(torch, "export", None)
    label = ""
    if exported is not None and isinstance(module, getattr(exported, "ExportedProgram", ())):
        label, module = "ExportedProgram", module.module()  # its graph and parameters
    if not isinstance(module, nn.Module):
        return [Finding("cannot_inspect", f"cannot inspect a {type(module).__name__}: it is not "
                        "an nn.Module (a scripted or traced function keeps no modules to read).",
                        "Pass the nn.Module itself (before torch.jit.script/trace or "
                        "torch.compile).", type(module).__name__)]
    findings: list[Finding] = []
    registered = {id(m) for m in module.modules()}
    modules = list(module.named_modules())
    for name, m in list(modules):  # RNNs in plain containers are not in the module tree
        for attr, value in list(getattr(m, "__dict__", {}).items()):
            items = (value.items() if isinstance(value, dict) else enumerate(value)
                     if isinstance(value, (list, tuple)) else ())
            for key, sub in items:
                if isinstance(sub, nn.Module) and id(sub) not in registered:
                    path = f"{name + '.' if name else ''}{attr}[{key!r}]"
                    registered.update(id(x) for x in sub.modules())
                    for sub_name, x in sub.named_modules():
                        if isinstance(x, (nn.RNNBase, nn.RNNCellBase)):
                            findings.append(Finding(
                                "unregistered", f"{type(x).__name__} kept in a plain "
                                f"{type(value).__name__}: module.to('cuda') does not move it and "
                                "state_dict() does not save it.", "Hold it in nn.ModuleList or "
                                "nn.ModuleDict (or as an attribute).",
                                path + (f".{sub_name}" if sub_name else "")))
                    modules.extend((path + (f".{n}" if n else ""), x)
                                   for n, x in sub.named_modules())
    rnn_ops = ("aten::lstm", "aten::gru", "aten::rnn_tanh", "aten::rnn_relu")
    found_rnn = False
    top = label or getattr(module, "original_name", None) or type(module).__name__
    where = {id(m): name or top for name, m in modules}
    calls, cannot = _calls_of(module, sample, top, where)
    modules.extend(dict(((path, c.op), (path, c)) for path, c in calls).values())  # once each
    looped: set = set()  # modules inside a loop reported by class
    for name, m in modules:
        path = name or top
        original = getattr(m, "original_name", None)  # scripted or traced submodule
        cls = original if isinstance(m, torch.jit.ScriptModule) and original else type(m).__name__
        if isinstance(m, _RNNCall) and (m.op not in _FUSED_OPS or m.tensor is None):
            found_rnn = True
            if m.op == "loop" and path in looped:
                continue
            findings.append(m.finding(path) if m.tensor is not None or m.op not in _FUSED_OPS
                            else Finding("cannot_inspect", f"cannot tell which device and dtype "
                                         f"this torch.{m.op} call gets.", "Pass sample= (one "
                                         "batch of your inputs) to run it.", path))
            continue
        if not isinstance(m, _RNNCall) and type(m).__module__.startswith(
                ("torch.ao.nn.quantizable", "torch.ao.nn.quantized.modules")) and \
                cls in ("LSTM", "LSTMCell") and path not in looped:
            found_rnn = True
            looped.update(where.get(id(x), "") for x in m.modules())
            findings.append(Finding("gate_loop", f"{type(m).__module__.split('.modules')[0]}"
                                    f".{cls} runs its gates as Linear layers in a Python loop "
                                    "over time steps: no fused RNN op, never cuDNN.",
                                    "Train and run on the GPU with nn.LSTM; convert to the "
                                    "quantizable LSTM only for the quantized model you serve on "
                                    "CPU.", path))
            continue
        if type(m).__module__.startswith(("torch.ao.nn.quantized", "torch.nn.quantized")) and \
                cls in ("LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"):
            found_rnn = True
            findings.append(Finding("quantized", f"dynamically quantized {cls}: it runs "
                                    "PyTorch's quantized CPU kernels, never cuDNN.",
                                    "Keep a float copy of the RNN for the GPU; quantize only the "
                                    "model you serve on CPU.", path))
            continue
        if isinstance(m, (nn.LSTMCell, nn.GRUCell, nn.RNNCell)) or (
                isinstance(m, torch.jit.ScriptModule) and cls in ("LSTMCell", "GRUCell", "RNNCell")):
            found_rnn = True
            findings.append(Finding("cell_loop", f"{cls}: a cell runs one time "
                                    "step per call, so a loop over it never uses cuDNN.",
                                    f"Use nn.{cls[:-4]} over the whole sequence.",
                                    path))
            continue
        if isinstance(m, nn.RNNBase):
            weights = [w for w in m._flat_weights if isinstance(w, torch.Tensor)]
        elif isinstance(m, torch.jit.ScriptModule) and cls in ("LSTM", "GRU", "RNN"):
            weights = [w for _, w in m.named_parameters(recurse=False)]  # the same aten call
        elif isinstance(m, _RNNCall):  # an RNN op of your forward: it decides by its input
            weights, cls = [m.tensor], f"torch.{m.op}"
        else:
            continue
        found_rnn = True
        before = len(findings)
        if not weights:
            findings.append(Finding("cannot_inspect", f"cannot inspect {cls}: it has no "
                                    "weights to read.", "Pass the module with its weights.", path))
            continue
        device, dtype = weights[0].device, weights[0].dtype
        if device.type != "cuda":
            findings.append(Finding("device", f"parameters are on {device.type}: cuDNN runs "
                                    "only on CUDA tensors.", "Move the module and its inputs "
                                    "to the GPU: .to('cuda').", path))
        if not torch.backends.cudnn.enabled:
            findings.append(Finding("cudnn_disabled", "torch.backends.cudnn.enabled is False.",
                                    "Leave cuDNN enabled (remove cudnn.enabled = False or "
                                    "cudnn.flags(enabled=False)).", path))
        elif device.type == "cuda" and not torch.backends.cudnn.is_available():
            findings.append(Finding("cudnn_unavailable", "this PyTorch cannot load cuDNN.",
                                    "Install a PyTorch build with cuDNN (pip's CUDA wheels "
                                    "bring it).", path))
        if dtype == torch.bfloat16:
            findings.append(Finding("dtype", "bfloat16: cuDNN runs it only where PyTorch allows "
                                    "a bfloat16 cuDNN RNN for this GPU and cuDNN version; "
                                    "otherwise the generic kernel runs.", "Use float16 or "
                                    "float32 (autocast picks float16 for RNNs on CUDA).", path))
        elif dtype not in (torch.float16, torch.float32, torch.float64):
            findings.append(Finding("dtype", f"dtype {dtype}: cuDNN takes float16, float32 and "
                                    "float64.", "Use float32 or float16.", path))
        storages = {w.untyped_storage().data_ptr() for w in weights}
        if device.type == "cuda" and len(storages) > 1:
            findings.append(Finding("weights_not_flat", "the weights are not in one contiguous "
                                    "buffer: PyTorch warns and copies them on every call.",
                                    "Call flatten_parameters() after replacing weights, and at "
                                    "the start of forward() under DataParallel.", path))
        if isinstance(m, _RNNCall) and m.acceptable is False and len(findings) == before:
            findings.append(Finding("cudnn_refused", "PyTorch's own test "
                                    "(torch.cudnn_is_acceptable) refused this call's input for "
                                    "a reason this checker cannot name.", "Compare the input's "
                                    "device, dtype and size with a plain nn.LSTM call.", path))
    if sample is not None and cannot:  # you asked for a run: say that it failed
        findings.append(Finding("cannot_inspect", f"cannot inspect what runs: {cannot}.",
                                "Pass what forward() takes: a tensor, a tuple of its arguments "
                                "or a dict of keyword arguments.", top))
    elif cannot and not found_rnn:  # never silence where the checker could not look
        findings.append(Finding("cannot_inspect", f"found no RNN module, and {cannot}: an RNN op "
                                "its forward calls itself (torch.lstm, torch._VF.lstm) or a loop "
                                "over gates would not show.", "Pass sample= (one batch of your "
                                "inputs): check_module then runs forward once and records the "
                                "ops it calls.", top))
    elif cannot and type(module).forward is not nn.Module.forward:  # a forward of yours runs
        findings.append(Finding("cannot_inspect", f"{cannot}: beside the RNN modules found, an "
                                "RNN op its forward calls itself or a loop over a cell or gates "
                                "(a hand-written RNN) would not show.", "Pass sample= (one batch "
                                "of your inputs): check_module then runs forward once and "
                                "records the ops it calls.", top))
    if type(module).__name__ == "OptimizedModule" and hasattr(module, "_orig_mod"):
        findings.extend(_compiled_findings(module, sample, modules))
    if not found_rnn and isinstance(module, torch.jit.ScriptModule):
        try:
            graph = str(module.inlined_graph)
        except Exception:  # some scripted modules have no single forward graph
            graph = ""
        if any(op in graph for op in rnn_ops):
            findings.append(Finding("cannot_inspect", "cannot inspect: the scripted or traced "
                                    "graph calls an RNN op that belongs to no module it keeps.",
                                    "Pass the nn.Module itself (before torch.jit.script/trace).",
                                    top))
    return findings


def _compiled_findings(module, sample, modules) -> list[Finding]:
    """A module torch.compile wraps: where Dynamo puts its RNN modules into the graph it
    compiles (torch._dynamo.config.allow_rnn=True; by default it breaks the graph there and runs
    them eagerly), the compiler gets aten.lstm, aten.gru or aten.rnn_*, and inductor, its default,
    rewrites them into per-step operations (on a CUDA input; mkldnn on the CPU): no cuDNN. With a
    sample, Dynamo itself is asked which ops reach its graphs (it traces again, once)."""
    import torch
    from torch import nn
    rnns = [(name, m) for name, m in modules if isinstance(m, nn.RNNBase)]
    if not rnns:
        return []
    ops = _ops_dynamo_compiles(module._orig_mod, sample) if sample is not None else None
    if ops is None:  # no sample (or Dynamo could not trace it): Dynamo's switch as set now
        if not torch._dynamo.config.allow_rnn:
            return []
        how = "torch._dynamo.config.allow_rnn is True: torch.compile puts this RNN into its graph"
    elif not ops & set(_FUSED_OPS):
        return []
    else:
        how = (f"torch.compile put aten.{sorted(ops & set(_FUSED_OPS))[0]} into its graph "
               "(torch._dynamo.config.allow_rnn is True)")
    return [Finding("compiled", f"{how}, and inductor, its default compiler, rewrites it into "
                    "per-step operations on a GPU: no cuDNN.", "Leave torch._dynamo.config."
                    "allow_rnn False (the default): Dynamo then runs the RNN eagerly, on cuDNN, "
                    "between two compiled graphs.", name, SITE + "criteria/#outside-the-layer")
            for name, _ in rnns]


def _ops_dynamo_compiles(module, sample) -> set | None:
    """The ops in every graph torch.compile's Dynamo hands its compiler for module(sample),
    with the Dynamo settings in force now. None where it cannot trace."""
    import torch
    ops: set = set()

    def record(gm, example_inputs):  # a compiler that only records, then runs the graph
        ops.update(_aten_name(n.target) or getattr(n.target, "__name__", "")
                   for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward
    args = sample if isinstance(sample, tuple) else (sample,)
    torch._dynamo.reset()  # trace afresh; the reader's compiled module compiles again once
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.compile(module, backend=record)(*args)
    except Exception:  # a forward Dynamo cannot trace: Dynamo's switch stands
        return None
    finally:
        torch._dynamo.reset()
    return ops


class _Fail(Exception):
    """A problem to report in one line on stderr, exit 2."""


# ------------------------------------------------------------------------------ the probe
# The static rules above are this file's reading of each library. The probe asks the library:
# it calls your model once, on your sample or on zeros, with the backend's own decision code
# believing a GPU is present, and records which LSTM/GRU calls reach the function that would
# run cuDNN. That function is replaced by a recorder that fails the way a missing cuDNN fails,
# so Keras falls back to its generic loop and the call finishes on the CPU. Nothing runs cuDNN.

class _Record:
    """What the probe saw of one RNN layer: its calls, those that reached cuDNN, the masks."""
    def __init__(self, layer):
        self.layer, self.calls, self.cudnn, self.dtypes = layer, 0, 0, set()
        self.masked_calls, self.call_masks = 0, []  # calls given a mask, and those masks
        self.masks_reached, self.masks_refused = 0, []  # masks cuDNN's function got, refused
        self.outside: dict[str, str] = {}  # criterion: what, outside the layer, refused cuDNN
        self.raised = ""  # Keras's error where use_cudnn=True and it refused cuDNN
        self.costs: set = set()  # what its cuDNN calls cost (criteria in _COSTS)


class _Probe:
    def __init__(self):
        self.records: dict[int, _Record] = {}
        self.stack: list = []  # the RNN layers (or fused Bidirectional layers) being called
        self.undo: list = []
        self.hits = 0  # calls of the cuDNN function, counted or not
        # > 0 while Keras makes calls the reader did not: building the model on symbolic inputs,
        # or retrying each direction after a fused Bidirectional call the recorder failed.
        self.mute = 0
        self.fused: list[list] = []  # one per Bidirectional.call running: [True] once muted
        self.frames: list[_CallFrame] = []  # every Keras layer being called, outermost first
        self.called: dict[int, int] = {}  # calls of each layer (the reader's calls only)
        self.loops: list = []  # (layer of yours, what it repeats, times) per loop over time
        self.shadow = 0  # > 0 while the probe calls a layer again, one time step longer
        self.concat = None  # the framework's concatenate(tensors, axis=...)
        self.compiled = False  # the call runs as compile(jit_compile=True) runs it

    def record(self, layer) -> _Record:
        return self.records.setdefault(id(layer), _Record(layer))

    def patch(self, owner, name, new):
        self.undo.append((owner, name, owner.__dict__[name] if isinstance(owner, type)
                          else getattr(owner, name)))
        setattr(owner, name, new)

    def restore(self):
        for owner, name, old in reversed(self.undo):
            setattr(owner, name, old)
        self.undo.clear()

    def wrap_method(self, cls, name, masked_arg=None, generic=None):
        """Count the calls of cls.name per layer and keep the layer on the stack meanwhile.
        generic: the generic loop to finish a call with when use_cudnn=True raised only because
        the recorder failed the cuDNN call (on a GPU that call runs)."""
        if name not in cls.__dict__:
            return
        original, probe = cls.__dict__[name], self

        @functools.wraps(original)
        def wrapper(layer, *args, **kwargs):
            rec = probe.record(layer)
            # RNN.inner_loop inside LSTM's is the same call; a muted call is not the reader's.
            if not probe.mute and not probe.shadow and (
                    not probe.stack or probe.stack[-1] is not layer):
                rec.calls += 1
                mask = args[masked_arg] if masked_arg is not None and len(args) > masked_arg \
                    else kwargs.get("mask")
                if isinstance(mask, (list, tuple)):
                    mask = mask[0] if mask else None
                if mask is not None:
                    rec.masked_calls += 1
                    mask = _to_numpy(mask)
                    if mask is not None:
                        rec.call_masks.append(mask)
            probe.stack.append(layer)
            before = probe.hits
            try:
                return original(layer, *args, **kwargs)
            except ValueError as exc:
                if generic is None or "use_cudnn=True" not in str(exc):
                    raise
                if probe.hits == before and not probe.mute and not probe.shadow:
                    rec.raised = _first_line(exc)  # Keras refused cuDNN and raised, as on a GPU
                return generic(layer, *args, **kwargs)  # finish the call to see the rest
            finally:
                probe.stack.pop()
        # Keras reads a layer's call signature (TimeDistributed passes a mask only to a layer
        # whose call takes one): the recorder keeps the original's.
        wrapper.__signature__ = inspect.signature(original)
        self.patch(cls, name, wrapper)

    def wrap_fused(self, cls):
        """Keras >= 3.15 on JAX and PyTorch runs a Bidirectional LSTM (PyTorch: and GRU) as one
        fused call where its own test allows; that call decides for both directions. The
        recorder fails it, and Keras then retries each direction with its own arguments; on a
        GPU the fused call returns, so that retry is muted."""
        names = [n for n in ("_call_fused_lstm", "_call_fused_gru") if n in cls.__dict__]
        if not names or "call" not in cls.__dict__:
            return
        probe, call = self, cls.__dict__["call"]

        @functools.wraps(call)
        def bidirectional_call(layer, *args, **kwargs):
            probe.fused.append([])
            try:
                return call(layer, *args, **kwargs)
            finally:
                if probe.fused.pop():
                    probe.mute -= 1
        bidirectional_call.__signature__ = inspect.signature(call)
        self.patch(cls, "call", bidirectional_call)
        for name in names:
            def fused(layer, *args, _original=cls.__dict__[name], **kwargs):
                probe.stack.append(layer)
                before = probe.hits
                try:
                    return _original(layer, *args, **kwargs)
                except NotImplementedError:
                    if probe.hits != before and probe.fused and not probe.fused[-1]:
                        probe.fused[-1].append(True)  # the fused call reached cuDNN
                        probe.mute += 1
                    raise
                finally:
                    probe.stack.pop()
            self.patch(cls, name, fused)

    def mute_while(self, owner, name):
        """Calls made inside owner.name are not the reader's (Keras building a model by
        calling it on symbolic inputs)."""
        original, probe = getattr(owner, name), self

        @functools.wraps(original)
        def muted(*args, **kwargs):
            probe.mute += 1
            try:
                return original(*args, **kwargs)
            finally:
                probe.mute -= 1
        self.patch(owner, name, muted)

    def watch_calls(self, layer_cls):
        """Note every call of every layer (Layer.__call__), so that a layer of yours that calls
        a cell, a layer or its own weights once per time step shows as the loop it is."""
        original, probe = layer_cls.__dict__["__call__"], self

        @functools.wraps(original)
        def call(layer, *args, **kwargs):
            if probe.mute or (probe.frames and probe.frames[-1].layer is layer):
                return original(layer, *args, **kwargs)
            if probe.frames:
                probe.frames[-1].calls.setdefault(id(layer), [layer, 0])[1] += 1
            if not probe.shadow:
                probe.called[id(layer)] = probe.called.get(id(layer), 0) + 1
            frame = _CallFrame(layer, _time_steps(args, kwargs))
            probe.frames.append(frame)
            try:
                out = original(layer, *args, **kwargs)
            finally:
                probe.frames.pop()
            if probe.shadow and probe.frames:  # what a sub-layer gave back, step by step
                probe.frames[-1].outputs.setdefault(id(layer), []).append(out)
            loop = None if probe.shadow else frame.loop()
            if loop and id(layer) not in {id(l) for l, *_ in probe.loops} and \
                    probe.follows_length(original, frame, loop, args, kwargs) and \
                    probe.carries_state(original, frame, loop, args, kwargs):
                probe.loops.append((layer, *loop))
            return out
        self.patch(layer_cls, "__call__", call)

    def follows_length(self, original, frame, loop, args, kwargs) -> bool:
        """A sub-layer called, or a weight read, once per time step: call the layer again on
        its input one step longer (its last step repeated), uncounted, and see whether the
        number of calls or reads grows with it. A sub-layer called twice for another reason
        (on two inputs) does not. A cell stepped twice or Keras's generic loop needs no
        check; where the input cannot be made longer, what was seen stands."""
        what, times = loop
        if isinstance(what, str) or _kind(what) == "cell":
            return True
        longer = _one_step_more(args, kwargs, frame.steps, self.concat)
        if longer is None:
            return True
        again = _CallFrame(frame.layer, frame.steps + 1)
        self.shadow += 1
        self.frames.append(again)
        try:
            original(frame.layer, *longer[0], **longer[1])
        except Exception:  # a layer that takes this length only: not a loop over time steps
            return False
        finally:
            self.frames.pop()
            self.shadow -= 1
        seen = again.calls.get(id(what), [None, 0])[1] if "Layer" in _class_names(what) \
            else again.reads.get(id(what), 0)
        return seen * frame.steps == times * (frame.steps + 1)

    def carries_state(self, original, frame, loop, args, kwargs) -> bool:
        """A loop over time steps is a recurrence when a step uses what an earlier step
        computed. Call the layer again (uncounted) on its input, and on its input with the first
        time step changed: a recurrence changes what a later step computes (a sub-layer called
        once per step gives back something else from the second step on, or the layer's
        output changes after its first step). A layer applied to each frame on its own, or a
        score per step, changes nothing after the first step. A cell stepped twice or Keras's
        generic loop needs no check; where the input cannot be changed, what was seen stands."""
        what, times = loop
        if isinstance(what, str) or _kind(what) == "cell":
            return True
        changed = _first_step_changed(args, kwargs, frame.steps, self.concat)
        if changed is None:
            return True
        runs = []
        for call_args, call_kwargs in ((args, kwargs), changed):
            again = _CallFrame(frame.layer, frame.steps)
            self.shadow += 1
            self.frames.append(again)
            try:
                out = original(frame.layer, *call_args, **call_kwargs)
            except Exception:  # an input it does not take: keep what was seen
                return True
            finally:
                self.frames.pop()
                self.shadow -= 1
            runs.append((out, again.outputs))
        (out, subs), (out2, subs2) = runs
        for key, calls in subs.items():  # sub-layers called once per step (or a multiple)
            n = len(calls)
            if n < frame.steps or n % frame.steps or len(subs2.get(key, ())) != n:
                continue
            first = n // frame.steps  # the calls of the first step
            if any(not _same(a, b) for a, b in zip(calls[first:], subs2[key][first:])):
                return True
        later, later2 = _after_first_step(out, frame.steps), _after_first_step(out2, frame.steps)
        if later is not None and later2 is not None:
            return not _same(later, later2)
        # no time axis to read: a weight read per step may carry state through the output
        return "Layer" not in _class_names(what) and not _same(out, out2)

    def watch_reads(self, owner, name):
        """Count the reads of each variable by the layer whose own call reads it."""
        original, probe = owner.__dict__[name], self
        read = original.fget if isinstance(original, property) else original

        def counted(var, *args, **kwargs):
            if probe.frames and not probe.mute:
                reads = probe.frames[-1].reads
                reads[id(var)] = reads.get(id(var), 0) + 1
            return read(var, *args, **kwargs)
        self.patch(owner, name, property(counted) if isinstance(original, property)
                   else functools.wraps(read)(counted))

    def watch_generic(self, module):
        """Keras's generic RNN loop (backend.rnn), when a layer of yours runs it itself: under
        every name it goes by (keras.backend.rnn is the same function)."""
        original, probe = module.rnn, self

        @functools.wraps(original)
        def rnn(*args, **kwargs):
            if probe.frames and not probe.mute:
                probe.frames[-1].generic += 1
            return original(*args, **kwargs)
        for name, other in list(sys.modules.items()):
            if name.split(".")[0] in ("keras", "tf_keras") and \
                    getattr(other, "rnn", None) is original:
                self.patch(other, "rnn", rnn)

    def costs(self, criterion: str):
        """The call on top of the stack reaches cuDNN at a cost (weights outside one buffer)."""
        if self.mute or self.shadow or not self.stack:
            return
        top = self.stack[-1]
        for layer in ([top.forward_layer, top.backward_layer] if hasattr(top, "forward_layer")
                      else [top]):
            self.record(layer).costs.add(criterion)

    def refused_outside(self, criterion: str, what: str):
        """Something outside the layer's arguments (a context around the call, a device scope)
        made the library refuse cuDNN for the layer on top of the stack."""
        if self.mute or self.shadow or not self.stack:
            return
        top = self.stack[-1]
        for layer in ([top.forward_layer, top.backward_layer] if hasattr(top, "forward_layer")
                      else [top]):
            self.record(layer).outside.setdefault(criterion, what)

    def reached(self, mask=None, mask_ok=True, dtype=None):
        """The cuDNN function was called, by the layer on top of the stack; with a mask, which
        the library accepted (mask_ok) or refused."""
        self.hits += 1
        if self.mute or self.shadow or not self.stack:
            return
        top = self.stack[-1]
        layers = ([top.forward_layer, top.backward_layer] if hasattr(top, "forward_layer")
                  else [top])
        for layer in layers:
            rec = self.record(layer)
            rec.cudnn += 1
            if layer is not top:
                rec.calls += 1
            if mask is not None:
                rec.masks_reached += 1
                if not mask_ok:
                    rec.masks_refused.append(mask)
            if dtype is not None:
                rec.dtypes.add(str(getattr(dtype, "name", dtype)).replace("torch.", ""))


class _CallFrame:
    """One call of a Keras layer: what it called, read and ran, directly (not through a
    sub-layer)."""
    def __init__(self, layer, steps: int):
        self.layer, self.steps, self.generic = layer, steps, 0
        self.calls: dict[int, list] = {}  # id(sub-layer): [sub-layer, times called]
        self.reads: dict[int, int] = {}  # id(variable): times read
        self.outputs: dict[int, list] = {}  # id(sub-layer): what each call gave (probe's reruns)

    def loop(self):
        """(what, times) where a layer of yours loops over time steps in this call: it calls
        a cell twice or more, runs Keras's generic loop (backend.rnn) itself, or calls a
        sub-layer or reads a weight of its own once per time step of its input. None
        otherwise (Keras's own layers, and the RNN layers, judged by their class)."""
        layer = self.layer
        if _kind(layer) is not None or type(layer).__module__.split(".")[0] in (
                "keras", "tf_keras", "tensorflow"):
            return None
        subs = [(sub, n) for sub, n in self.calls.values() if _kind(sub) in ("cell", None)]
        for sub, n in subs:
            if n >= 2 and _kind(sub) == "cell":
                return sub, n
        if self.generic:
            return "backend.rnn", self.generic
        steps = self.steps
        if steps < 2:
            return None
        for sub, n in subs:
            if n >= steps and n % steps == 0:
                return sub, n
        own = {id(v): v for v in _own_variables(layer)}
        for key, n in self.reads.items():
            if key in own and n >= steps and n % steps == 0:
                return own[key], n
        return None


def _one_step_more(args, kwargs, steps: int, concat):
    """(args, kwargs) of a layer call with its inputs (and mask) one time step longer: the last
    step repeated along axis 1. None where there is nothing to lengthen."""
    if not args or concat is None or steps < 1:
        return None

    def longer(x):
        shape = getattr(x, "shape", None)
        try:
            if shape is not None and len(shape) >= 2 and int(shape[1]) == steps:
                return concat([x, x[:, -1:]], axis=1)
        except (TypeError, ValueError):
            pass
        return x
    first = args[0]
    first = type(first)(longer(x) for x in first) if isinstance(first, (list, tuple)) \
        else longer(first)
    kwargs = dict(kwargs)
    if kwargs.get("mask") is not None:
        kwargs["mask"] = longer(kwargs["mask"])
    return (first,) + tuple(args[1:]), kwargs


def _first_step_changed(args, kwargs, steps: int, concat):
    """(args, kwargs) of a layer call with the first time step of its inputs changed (one
    added), the rest as it was. None where there is no time axis to change."""
    if not args or concat is None or steps < 2:
        return None
    changed = []

    def change(x):
        shape = getattr(x, "shape", None)
        try:
            if shape is not None and len(shape) >= 2 and int(shape[1]) == steps:
                changed.append(x)
                return concat([x[:, :1] + 1, x[:, 1:]], axis=1)
        except (TypeError, ValueError):
            pass
        return x
    first = args[0]
    first = type(first)(change(x) for x in first) if isinstance(first, (list, tuple)) \
        else change(first)
    return ((first,) + tuple(args[1:]), dict(kwargs)) if changed else None


def _flat_arrays(x) -> list:
    """The arrays in a layer's answer (a tensor, or a list, tuple or dict of them)."""
    if isinstance(x, dict):
        x = list(x.values())
    if isinstance(x, (list, tuple)):
        return [a for item in x for a in _flat_arrays(item)]
    value = _to_numpy(x)
    return [] if value is None else [value]


def _same(a, b) -> bool:
    import numpy as np
    xs, ys = _flat_arrays(a), _flat_arrays(b)
    def close(x, y):
        if x.shape != y.shape:
            return False
        if not (np.issubdtype(x.dtype, np.inexact) and np.issubdtype(y.dtype, np.inexact)):
            return bool(np.array_equal(x, y))
        return bool(np.allclose(x, y, rtol=1e-5, atol=1e-6, equal_nan=True))
    return len(xs) == len(ys) and all(close(x, y) for x, y in zip(xs, ys))


def _after_first_step(out, steps: int):
    """A layer's output from its second time step on, where it has a time axis; else None."""
    arrays = _flat_arrays(out)
    if not arrays or any(a.ndim < 2 or a.shape[1] != steps for a in arrays):
        return None
    return [a[:, 1:] for a in arrays]


def _own_variables(layer) -> list:
    """The weights a layer created itself, not those of its sub-layers."""
    return [v for name in ("_trainable_variables", "_non_trainable_variables",
                           "_trainable_weights", "_non_trainable_weights")
            for v in (getattr(layer, name, None) or [])]


def _time_steps(args, kwargs) -> int:
    """The length of axis 1 (time) of a layer call's first input, 0 where unknown."""
    x = args[0] if args else kwargs.get("inputs", kwargs.get("sequences"))
    while isinstance(x, (list, tuple)) and x:
        x = x[0]
    if isinstance(x, dict):
        x = next(iter(x.values()), None)
    shape = getattr(x, "shape", None)
    try:
        return int(shape[1]) if shape is not None and len(shape) >= 2 else 0
    except (TypeError, ValueError):  # an unknown length
        return 0


def _to_numpy(x):
    """The values of a tensor, or None for one that has none yet (a symbolic tensor)."""
    import numpy as np
    try:
        if hasattr(x, "detach"):
            x = x.detach().cpu()
        return np.asarray(x)
    except Exception:  # a graph tensor, a tracer: no values to read
        return None


def _probe_keras3(probe: _Probe, backend: str):
    bidirectional, gru, lstm, rnn = (importlib.import_module(f"keras.src.layers.rnn.{name}")
                                     for name in ("bidirectional", "gru", "lstm", "rnn"))
    kb = importlib.import_module("keras.src.backend")
    generic_loop = rnn.RNN.inner_loop
    probe.wrap_method(rnn.RNN, "inner_loop", masked_arg=2)
    probe.wrap_method(lstm.LSTM, "inner_loop", masked_arg=2, generic=generic_loop)
    probe.wrap_method(gru.GRU, "inner_loop", masked_arg=2, generic=generic_loop)
    probe.wrap_fused(bidirectional.Bidirectional)  # Keras >= 3.15
    probe.mute_while(kb, "compute_output_spec")
    probe.watch_calls(importlib.import_module("keras.src.layers.layer").Layer)
    probe.concat = importlib.import_module("keras.src.ops").concatenate
    variable = next((c for c in kb.Variable.__mro__ if "value" in c.__dict__), None)
    if variable is None:
        raise AttributeError("no Variable class defines value")
    probe.watch_reads(variable, "value")
    probe.watch_generic(kb)
    if backend == "tensorflow":
        import tensorflow as tf
        brnn = importlib.import_module("keras.src.backend.tensorflow.rnn")

        from tensorflow.python.eager import context as tf_context

        def recorder(mask_index):
            def fake(inputs, *args, **kwargs):
                scope = tf_context.context().device_name  # a tf.device scope of yours, if any
                if scope and "GPU" not in scope.upper():
                    probe.refused_outside("placed", tf.DeviceSpec.from_string(scope).device_type)
                mask = args[mask_index - 1] if len(args) >= mask_index else kwargs.get("mask")
                ok = True
                if mask is not None and not probe.mute:
                    try:  # Keras's own check, which fails the cuDNN call on a GPU
                        brnn._assert_valid_mask(mask)
                    except tf.errors.InvalidArgumentError:
                        ok = False
                probe.reached(None if mask is None else _to_numpy(mask), ok, inputs.dtype)
                raise tf.errors.NotFoundError(None, None, "cudnn_check probe: no cuDNN here")
            return fake
        probe.patch(brnn, "_is_gpu_available", lambda: True)
        probe.patch(brnn, "_cudnn_lstm", recorder(6))
        probe.patch(brnn, "_cudnn_gru", recorder(5))
    elif backend == "jax":
        import jax.experimental.rnn as jax_rnn
        brnn = importlib.import_module("keras.src.backend.jax.rnn")

        def fake(x, *args, **kwargs):
            probe.reached(None, dtype=x.dtype)
            raise RuntimeError("cudnn_check probe: no cuDNN here")
        probe.patch(brnn, "_is_gpu_available", lambda: True)
        probe.patch(jax_rnn, "lstm", fake)  # Keras imports it from there at each call
    elif backend == "torch":
        import torch
        brnn = importlib.import_module("keras.src.backend.torch.rnn")

        class CudaLooking(torch.Tensor):  # a CPU tensor that says it is on a GPU
            @property
            def device(self):
                return torch.device("cuda", 0)

        def recorder(error, original=None, prepare=None):
            def fake(*args, **kwargs):
                if not torch.backends.cudnn.enabled:  # what aten's cudnn_is_acceptable reads
                    probe.refused_outside("cudnn_disabled", "torch.backends.cudnn.enabled")
                if prepare is not None and not _one_buffer(original, prepare, args, kwargs):
                    probe.costs("weights_not_flat")
                probe.reached(None, dtype=getattr(args[0], "dtype", None))
                raise error("cudnn_check probe: no cuDNN here")
            return fake

        def _one_buffer(original, prepare, args, kwargs) -> bool:
            """Are the weights Keras hands PyTorch's cuDNN call in one buffer? Keras's own
            packing function, asked with the call's arguments. Where they are not, PyTorch
            compacts them on every call on a GPU (and warns): a cost, not a fallback."""
            try:
                bound = inspect.signature(original).bind(*args, **kwargs).arguments
                weights = prepare(bound["kernel"], bound["recurrent_kernel"], bound["bias"],
                                  torch.device("cpu"))  # the same packing, on this machine
                return len({w.untyped_storage().data_ptr() for w in weights}) <= 1
            except Exception:  # another release's signature: say nothing
                return True

        def on_gpu(fn):  # the backend's lstm/gru decide by the input's device
            def wrapper(inputs, *args, **kwargs):
                out = fn(torch.as_tensor(inputs).as_subclass(CudaLooking), *args, **kwargs)
                return plain(out)
            return wrapper

        def plain(out):  # what the layer gets back says "cpu" again
            if isinstance(out, (list, tuple)):
                return type(out)(plain(o) for o in out)
            return out.as_subclass(torch.Tensor) if isinstance(out, torch.Tensor) else out
        probe.patch(brnn, "_is_cuda_cudnn_available", lambda: True)
        probe.patch(brnn, "_cudnn_lstm", recorder(RuntimeError, brnn._cudnn_lstm,
                                                  getattr(brnn, "prepare_lstm_params", None)))
        probe.patch(brnn, "_cudnn_gru", recorder(RuntimeError, brnn._cudnn_gru,
                                                 getattr(brnn, "prepare_gru_params", None)))
        for name in ("prepare_lstm_params", "prepare_gru_params"):  # the fused Bidirectional
            if hasattr(brnn, name):
                probe.patch(brnn, name, recorder(NotImplementedError))
        for name in ("lstm", "gru", "bidirectional_lstm", "bidirectional_gru"):
            if hasattr(kb, name):
                probe.patch(kb, name, on_gpu(getattr(kb, name)))
    else:
        raise _Fail(f"the {backend} backend has no cuDNN path to probe")


def _probe_keras2(probe: _Probe):
    base_rnn, gru, gru_lstm_utils, lstm = (
        importlib.import_module(f"tf_keras.src.layers.rnn.{name}")
        for name in ("base_rnn", "gru", "gru_lstm_utils", "lstm"))
    probe.wrap_method(lstm.LSTM, "call", masked_arg=1)
    probe.wrap_method(gru.GRU, "call", masked_arg=1)
    probe.wrap_method(base_rnn.RNN, "call", masked_arg=1)
    conv, cudnn, cudnn_lstm, cudnn_gru = (
        importlib.import_module(f"tf_keras.src.layers.rnn.{name}")
        for name in ("base_conv_rnn", "base_cudnn_rnn", "cudnn_lstm", "cudnn_gru"))
    probe.wrap_method(conv.ConvRNN, "call", masked_arg=1)  # its own loop, not RNN.call's
    probe.wrap_method(cudnn._CuDNNRNN, "call", masked_arg=1)
    probe.watch_calls(importlib.import_module("tf_keras.src.engine.base_layer").Layer)
    probe.concat = importlib.import_module("tensorflow").concat
    probe.watch_reads(importlib.import_module(
        "tensorflow.python.ops.resource_variable_ops").BaseResourceVariable, "_read_variable_op")
    probe.watch_generic(importlib.import_module("tf_keras.src.backend"))

    def cudnn_only(layer, inputs, initial_state):
        """CuDNNLSTM and CuDNNGRU call TensorFlow's cuDNN op, whatever their arguments: note
        the call, and answer with zeros shaped as the op's answer."""
        import tensorflow as tf
        probe.reached(None, True, inputs.dtype)
        x = tf.transpose(inputs, (1, 0, 2)) if layer.time_major else inputs
        batch, steps = tf.shape(x)[0], tf.shape(x)[1]
        seq = tf.zeros(tf.stack([batch, steps, layer.units]), x.dtype)
        out = (tf.transpose(seq, (1, 0, 2)) if layer.time_major else seq) \
            if layer.return_sequences else seq[:, -1]
        return out, [tf.zeros(tf.stack([batch, layer.units]), x.dtype) for _ in initial_state]
    probe.patch(cudnn_lstm.CuDNNLSTM, "_process_batch", cudnn_only)
    probe.patch(cudnn_gru.CuDNNGRU, "_process_batch", cudnn_only)

    def recorder(module, gpu, standard):
        def fake(**kwargs):
            mask = kwargs.get("mask")
            probe.reached(None if mask is None else _to_numpy(mask), True,  # tf-keras checked
                          kwargs["inputs"].dtype)  # the mask before this call
            layer = probe.stack[-1] if probe.stack else None
            return getattr(module, standard)(
                zero_output_for_mask=getattr(layer, "zero_output_for_mask", False), **kwargs)
        probe.patch(module, gpu, fake)
    real_device_type = gru_lstm_utils.get_context_device_type

    def device_type():
        """tf-keras's answer with a GPU present: the device scope of your code where one is
        open (tf.device("/CPU:0") keeps the layer off cuDNN), else the GPU."""
        scoped = real_device_type()
        if scoped not in (None, gru_lstm_utils.GPU_DEVICE_NAME):
            probe.refused_outside("device_scope", f'tf.device("/{scoped}:0")')
        return scoped or gru_lstm_utils.GPU_DEVICE_NAME
    probe.patch(gru_lstm_utils, "get_context_device_type", device_type)
    recorder(lstm, "gpu_lstm", "standard_lstm")
    recorder(gru, "gpu_gru", "standard_gru")


def _zeros_for(model):
    """Zeros shaped from the model's inputs (batch 2, unknown lengths 3)."""
    import numpy as np
    inputs = getattr(model, "inputs", None)
    if not inputs:
        raise _Fail("the model has no input shapes (build it, or pass sample=)")
    arrays = []
    for t in inputs:
        shape = tuple(2 if i == 0 and d is None else (3 if d is None else d)
                      for i, d in enumerate(t.shape))
        dtype = getattr(t.dtype, "name", t.dtype) or "float32"
        arrays.append(np.zeros(shape, dtype=str(dtype)))
    return arrays[0] if len(arrays) == 1 else arrays


def _first_line(exc) -> str:
    """The line of an exception that says what went wrong (Keras wraps a layer's error in
    "Exception encountered when calling ...", with terminal colour codes)."""
    import re
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in str(exc).splitlines()]
    lines = [line for line in lines if line and not line.startswith("Exception encountered")]
    return lines[0] if lines else type(exc).__name__


def probe_model(model, sample=None) -> dict:
    """Call the model once with the library's own decision code believing a GPU is present.
    Returns {id(layer): _Record}; raises _Fail (one line) where it cannot run."""
    flavour, _, backend = _flavour(model)
    probe = _Probe()
    try:
        if flavour == "keras2":
            _probe_keras2(probe)
        else:
            _probe_keras3(probe, backend)
        if _torch_compiled(model, flavour, backend):
            # compile(jit_compile=True) on PyTorch: fit(), evaluate() and predict() run the
            # model inside torch.compile, where Keras reads torch.compiler.is_compiling()
            import torch
            probe.patch(torch.compiler, "is_compiling", lambda: True)
            probe.compiled = True
    except (ImportError, AttributeError, KeyError) as exc:
        probe.restore()
        raise _Fail(f"this {flavour} release's internals are not the ones the probe knows "
                    f"({type(exc).__name__}: {exc})")
    try:
        x = _zeros_for(model) if sample is None else sample
        model(x, training=False)
    except _Fail:
        raise
    except Exception as exc:  # the reader's model: anything can go wrong
        first = _first_line(exc)[:200]
        what = "your sample" if sample is not None else "zeros shaped from its inputs"
        raise _Fail(f"the model could not be called on {what} ({type(exc).__name__}: {first})")
    finally:
        probe.restore()
    return _Records(probe)


def _torch_compiled(model, flavour: str, backend: str) -> bool:
    """Keras 3 on PyTorch, compiled with jit_compile=True: its steps run in torch.compile."""
    return flavour == "keras3" and backend == "torch" and getattr(model, "jit_compile", False) \
        is True


class _Records(dict):
    """probe_model's answer: {id(layer): _Record} for the RNN layers called, with `loops`,
    (layer of yours, what it repeats, times) for each loop over time steps the probe saw,
    and `called`, {id(layer): calls} for every layer."""
    def __init__(self, probe: _Probe):
        super().__init__(probe.records)
        self.loops, self.called = probe.loops, probe.called
        self.compiled = probe.compiled


def _version_string(flavour: str) -> str:
    if flavour == "keras2":
        try:
            import tf_keras as k
        except ImportError:  # TF <= 2.15: Keras 2 is the keras package
            import keras as k
        return k.__version__
    import keras
    return keras.__version__


class Report(list):
    """check_model's findings (a list: [] means every RNN layer called takes cuDNN), with how
    they were obtained. `probe`: one line, whether the library's own decision ran on the model
    or the static reading stands in for it. `layers`: (path, class, verdict) for every RNN
    layer seen. `notes`: lines that do not change the verdict (the dtype policy).
    `conditions`: what your own code may open around the model's calls elsewhere (a context
    manager, a device scope, a compiler), which the library reads there and this check cannot
    see. `costs`: Findings of layers that run cuDNN at a cost (not in the list: cuDNN runs)."""
    def __init__(self, findings=(), probe="", layers=(), notes=(), conditions=(), costs=()):
        super().__init__(findings)
        self.probe, self.layers, self.notes = probe, list(layers), list(notes)
        self.conditions, self.costs = list(conditions), list(costs)


def _relevant(layer) -> bool:
    return _kind(layer) is not None or any(n in type(layer).__name__ for n in ("LSTM", "GRU"))


def _mask_reasons(masks, backend) -> list[Finding]:
    out: list[Finding] = []
    for mask in masks:
        for f in check_mask(mask, backend=backend):
            if f.criterion not in [g.criterion for g in out]:
                out.append(f)
    return out


def _dtype_note(model, records, flavour, backend) -> list[str]:
    policy = getattr(model, "dtype_policy", None) or getattr(model, "_dtype_policy", None)
    name = getattr(policy, "name", None)
    if name is None or name == "float32":
        return []
    seen = sorted({d for r in records.values() for d in r.dtypes})
    head = f"dtype policy {name}: the cuDNN function was called with {', '.join(seen) or 'nothing'}"
    if not seen:
        return [head + "."]
    if backend == "tensorflow":
        import tensorflow as tf
        from tensorflow.python.framework import op_def_registry
        op = op_def_registry.get("CudnnRNNV3")
        allowed = [tf.dtypes.as_dtype(t).name for a in op.attr if a.name == "T"
                   for t in a.allowed_values.list.type]
        ok = [d for d in seen if d in allowed]
        return [head + f"; TensorFlow's cuDNN op (CudnnRNNV3) accepts {', '.join(allowed)}, so "
                + ("it takes this dtype" if ok == seen else
                   f"{', '.join(d for d in seen if d not in ok)} falls back")
                + (" (its bfloat16 GPU kernel computes in float32, tensorflow/tensorflow#60108: "
                   "no bfloat16 speed-up for the RNN)." if "bfloat16" in ok else ".")]
    if backend == "jax":
        import jax.experimental.rnn as jax_rnn
        if "dtypes other than float32" not in (jax_rnn.__doc__ or "") or seen == ["float32"]:
            return [head + "; whether a GPU runs it through cuDNN is not decided here."]
        return [head + "; JAX's cuDNN LSTM is float32 only (jax.experimental.rnn says so, and "
                "jaxlib's GPU lowering refuses float16 and bfloat16). Called eagerly, the layer "
                "falls back to Keras's loop; in a compiled fit() the lowering error is expected "
                "to stop training. Give the LSTM dtype=\"float32\", or pass use_cudnn=False."]
    if backend == "torch":
        import torch
        ok = [str(d).replace("torch.", "") for d in torch.backends.cudnn.CUDNN_TENSOR_DTYPES]
        if set(seen) <= set(ok):
            return [head + f"; PyTorch's cuDNN RNN takes {', '.join(sorted(ok))}."]
        built = torch._C._cudnn.getCompileVersion() if torch.backends.cudnn.is_available() else None
        gpu = torch.cuda.get_device_capability() if torch.cuda.is_available() else None
        return [head + f"; PyTorch's cuDNN RNN takes {', '.join(sorted(ok))}, and bfloat16 only "
                "when PyTorch was built with cuDNN 9.13 or newer and the GPU has compute "
                "capability 8.0 or newer (pytorch/pytorch#164411); otherwise PyTorch runs its "
                "own CUDA LSTM, without cuDNN. This PyTorch was built with "
                + (f"cuDNN {'.'.join(map(str, built))}" if built else "no cuDNN")
                + (f"; this GPU has compute capability {gpu[0]}.{gpu[1]}." if gpu else "; no GPU "
                   "here to ask for its compute capability.")]
    return [head + "."]


# Criteria that a layer's kind breaks, whatever its arguments.
_NEVER = ("generic_rnn", "simple_rnn", "conv_rnn", "v1_layer", "cell_loop", "python_loop")


# Criteria decided outside the layer's arguments: a context around the call, a device scope.
_OUTSIDE = ("cudnn_disabled", "device_scope", "compiled")


def _verdict(found) -> str:
    if not found:
        return "uses cuDNN on a GPU"
    if all(f.is_cost for f in found):
        return "uses cuDNN on a GPU, with a cost"
    if found[0].criterion in _OUTSIDE:
        return "does not run cuDNN: decided outside the layer"
    if found[0].criterion == "use_cudnn_raises":
        return "raises an error (use_cudnn=True): no cuDNN"
    if found[0].criterion == "depends_on_padding":
        return "depends on the padding"
    return "never uses cuDNN" if found[0].criterion in _NEVER else \
        "falls back to the generic kernel"


def _static_verdict(found) -> str:
    return "never uses cuDNN" if found and found[0].criterion in _NEVER else \
        "falls back" if found else "eligible"


def _layer_paths(model, path: str | None = None, _out: dict | None = None) -> dict:
    """{id(layer): path} for the model and every layer Keras tracks in it."""
    out = {} if _out is None else _out
    path = getattr(model, "name", "model") if path is None else path
    out.setdefault(id(model), path)
    for child in _children(model):
        if id(child) not in out:
            _layer_paths(child, f"{path}/{child.name}", out)
    return out


def _conditions(records, flavour: str, backend: str) -> list[str]:
    """What this check cannot see, named as conditions: contexts your own code opens around the
    model's calls elsewhere (training, serving), where the library decides again."""
    if not any(r.cudnn and not r.outside and not r.raised for r in records.values()):
        return []
    if flavour == "keras2":
        return ["Condition: tf-keras reads the device scope open where each layer runs; a "
                'tf.device("/CPU:0") around your own calls of the model keeps it off cuDNN.']
    if backend == "torch":
        return ["Condition: PyTorch reads torch.backends.cudnn.enabled at each call (on for "
                "this check); a torch.backends.cudnn.flags(enabled=False) around your own calls "
                "turns cuDNN off. So does torch.compile around the model: Keras then runs its "
                "own loop" + ("." if records.compiled else ", as fit() and predict() do after "
                              "compile(jit_compile=True).")]
    if backend == "tensorflow":
        return ["Condition: this check ran with no device scope; where your own code calls the "
                'model inside tf.device("/CPU:0"), TensorFlow places the ops on the GPU machine '
                "itself, which this check does not decide."]
    if backend == "jax":
        return ["Condition: Keras's JAX backend asks jax.default_backend() (a GPU, pretended "
                "here); where your code puts the arrays on another device (jax.default_device, "
                "jax.device_put), this check does not decide what runs."]
    return []


def _cost_finding(criterion: str) -> Finding:
    """What a Keras layer's cuDNN call costs (Keras 3 on PyTorch)."""
    return Finding("weights_not_flat", "Keras hands PyTorch's cuDNN call the weights as separate "
                   "tensors, not one buffer: on a GPU PyTorch warns and compacts them on every "
                   "call (memory and a copy). cuDNN still runs.", "Nothing to change in the "
                   "layer: Keras's PyTorch backend packs its weights this way. Measure it; "
                   "nn.LSTM and nn.GRU keep theirs in one buffer.")


def _outside_finding(criterion: str, what: str, path: str = "") -> Finding:
    """A decision the library made outside the layer's arguments, seen as the layer ran."""
    if criterion == "cudnn_disabled":
        return Finding("cudnn_disabled", f"{what} was False when this layer ran (cudnn.flags("
                       "enabled=False) or cudnn.enabled = False around the call): PyTorch then "
                       "runs its own RNN kernel, not cuDNN.", "Leave cuDNN enabled where the "
                       "model runs.", path, SITE + "criteria/#outside-the-layer")
    if criterion == "compiled":
        return Finding("compiled", f"{what}: fit(), evaluate() and predict() run the model "
                       "through torch.compile, and inside it Keras's PyTorch backend skips cuDNN "
                       "(it asks torch.compiler.is_compiling()) and runs its own loop.",
                       "Compile with jit_compile=False (the default on this backend) where the "
                       "RNN's speed matters; the model called directly runs eagerly.", path,
                       SITE + "criteria/#outside-the-layer")
    return Finding("device_scope", f"this layer ran inside {what} (a device scope of yours): "
                   "tf-keras then takes its generic kernel, whatever the GPU.", "Remove that "
                   "device scope around the layer's call.", path,
                   SITE + "criteria/#outside-the-layer")


def _loop_finding(owner, what, times: int, static: dict, paths: dict) -> Finding:
    """A loop over time steps that a layer of yours runs in Python (what the probe saw)."""
    where = paths.get(id(owner)) or f"{owner.name} (called, not tracked by Keras)"
    if _kind(what) == "cell":
        path = static.get(id(what), (None,))[0] or paths.get(id(what)) or f"{where}/{what.name}"
        found = _cell_finding(what, path, f"called {times} times in one call of "
                              f"{type(owner).__name__} ({owner.name})")
    else:
        if isinstance(what, str):  # "backend.rnn"
            how = "runs Keras's generic RNN loop (backend.rnn) itself"
        elif "Layer" in _class_names(what):
            how = (f"calls {what.name} ({type(what).__name__}) {times} times in one call, once "
                   "per time step of its input")
        else:
            how = (f"reads its weight {getattr(what, 'path', None) or what.name} {times} times "
                   "in one call, once per time step of its input")
        found = Finding("python_loop", f"{type(owner).__name__}.call {how}: a Python loop over "
                        "time, which never uses cuDNN.", "If it computes an LSTM or GRU step, "
                        f"use {_cudnn_layers(owner)} over the whole sequence (one call).", where)
    found.source = "probe"
    return found


def check_model(model, sample=None, probe: bool = True) -> Report:
    """Findings for every recurrent layer a Keras model holds or calls (LSTM, GRU, and every
    other: SimpleRNN, ConvLSTM, RNN over any cell, loose cells, loops of yours over time steps),
    decided by the library itself (the probe), with the reasons read from each layer's
    arguments or kind. `sample`: one batch of your
    inputs (what model(sample) takes); without it the probe uses zeros shaped from the model's
    inputs. Where the probe cannot run, the static reading stands in, and `.probe` says so."""
    tracked = rnn_layers(model) if _kind(model) is None else [(model.name, model)]
    static = {id(layer): (path, layer, check_layer(layer, path)) for path, layer in tracked}
    for bi in _bidirectionals(model):  # a fused call: the backward's arguments do not count
        fwd, bwd = static.get(id(bi.forward_layer)), static.get(id(bi.backward_layer))
        if fwd and bwd and not fwd[2] and _fused_bidirectional(bi):
            bwd[2].clear()
    for _, _, found in static.values():
        for f in found:
            f.source = "static"
    flavour, _, backend = _flavour(model)
    if not probe:
        return Report([f for *_, fs in static.values() for f in fs], "static reading only "
                      "(probe=False)", [(p, type(l).__name__, "static: " + _static_verdict(fs))
                                        for p, l, fs in static.values()])
    try:
        records = probe_model(model, sample)
    except _Fail as exc:
        return Report([f for *_, fs in static.values() for f in fs],
                      f"static reading (the probe could not run: {exc})",
                      [(p, type(l).__name__, "static: " + _static_verdict(fs))
                       for p, l, fs in static.values()])
    findings, layers, conditions, costs = [], [], [], []
    per_batch = backend == "tensorflow"  # TF backend and tf-keras check a mask per batch
    where = "your sample" if sample is not None else "zeros"
    for rec in records.values():
        layer = rec.layer
        if not _relevant(layer) or rec.calls == 0:
            continue
        path = static.get(id(layer), (None,))[0] or \
            f"{getattr(model, 'name', 'model')}/{layer.name} (called, not tracked by Keras)"
        reasons = check_layer(layer, path)
        placed = rec.outside.pop("placed", None)  # a scope Keras 3 does not read: a condition
        if placed:
            conditions.append(f'Condition: {path} ran inside tf.device("/{placed}:0"). Keras '
                              "still calls cuDNN's op there; whether TensorFlow then places it "
                              "on the GPU anyway (soft device placement) is decided on a GPU "
                              "machine, not by this check.")
        if rec.raised:  # use_cudnn=True, and Keras refused cuDNN for this call: it raises
            found = [Finding("use_cudnn_raises", f'Keras raises "{rec.raised}"' + (
                " The model passes this layer a mask, which this backend's cuDNN path does not "
                "take." if rec.masked_calls and backend in ("jax", "torch") else ""),
                "Pass use_cudnn=\"auto\" (Keras then runs its generic loop)" + (
                    ", or drop the mask (equal-length batches)." if rec.masked_calls else
                    ", or change what keeps the layer off cuDNN."))] + [
                f for f in reasons if f.criterion != "use_cudnn"]
        elif rec.outside:  # a decision made outside the layer, in the context it ran in
            found = [_outside_finding(criterion, what) for criterion, what in rec.outside.items()]
        elif rec.cudnn >= rec.calls or (flavour == "keras2" and rec.masked_calls and not reasons):
            # Every call reached cuDNN's function (tf-keras: or only a mask kept it away).
            masks = rec.masks_refused if flavour == "keras3" else [
                m for m in rec.call_masks if check_mask(m, backend="tf_keras")]
            if per_batch and (rec.masks_reached or rec.masked_calls) and sample is None:
                found = [Finding("depends_on_padding", "a mask reaches cuDNN: Keras checks it "
                                 "per batch, and takes cuDNN only for batches whose mask is "
                                 "right-padded with no empty row.", 'Pad at the end (padding='
                                 '"post"); pass sample= (--sample) to check a batch of yours.')]
            elif per_batch and (masks or rec.cudnn < rec.calls):
                found = _mask_reasons(masks, "tensorflow") or [Finding(
                    "mask", "Keras refused the mask of your sample for cuDNN.",
                    'Pad at the end (padding="post") and drop empty rows.')]
            else:
                found = []
        else:
            found = reasons
            if not found and rec.masked_calls and backend in ("jax", "torch"):
                found = check_mask([[True]], backend=backend)
            if not found and records.compiled:
                found = [_outside_finding("compiled", "compile(jit_compile=True)")]
            if not found:
                found = [Finding("generic_loop", f"Keras ran its generic loop for this layer on "
                                 f"{where}, for a reason this checker cannot name.",
                                 "Compare the layer's arguments with the defaults.")]
            if rec.cudnn:
                for f in found:
                    f.message += f" (cuDNN on {rec.cudnn} of its {rec.calls} calls)"
        paid = [_cost_finding(c) for c in sorted(rec.costs)] if not found else []
        for f in found + paid:
            f.layer, f.source = path, "probe"
        findings.extend(found)
        costs.extend(paid)
        layers.append((path, type(layer).__name__, _verdict(found + paid)))
    done = {id(rec.layer) for rec in records.values() if rec.calls}
    paths = _layer_paths(model)
    for owner, what, times in records.loops:  # loops of yours over time steps
        found = _loop_finding(owner, what, times, static, paths)
        findings.append(found)
        looped = what if _kind(what) == "cell" else owner
        done.add(id(looped))
        layers.append((found.layer, type(looped).__name__, _verdict([found])))
    for path, layer, found in static.values():
        if id(layer) in done:
            continue
        findings.extend(found)
        if _kind(layer) == "cell" and records.called.get(id(layer)):
            layers.append((path, type(layer).__name__, _verdict(found)))  # your loop steps it
        elif _kind(layer) is not None:
            layers.append((path, type(layer).__name__, "not called on " + where + "; static: "
                           + _static_verdict(found)))
    version = _version_string(flavour)
    line = (f"asked tf-keras {version}" if flavour == "keras2" else
            f"asked Keras {version} on the {_BACKEND_NAMES.get(backend, backend)} backend")
    line += f", on {where}, with a GPU pretended"
    if records.compiled:
        line += ", inside torch.compile as compile(jit_compile=True) runs fit() and predict()"
    return Report(findings, line, layers, _dtype_note(model, records, flavour, backend),
                  conditions + _conditions(records, flavour, backend), costs)


# --------------------------------------------------------------------------- command line
class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        raise _Fail(f"usage error: {message}")


def _legacy_keras() -> bool:
    """TF_USE_LEGACY_KERAS=1: your tf.keras is Keras 2 (tf-keras), so load with it."""
    return os.environ.get("TF_USE_LEGACY_KERAS", "").strip().lower() in ("1", "true", "yes")


def _quiet_import_keras():
    """Import Keras (tf-keras under TF_USE_LEGACY_KERAS=1) with TensorFlow's start-up log lines
    (C++, on fd 2) silenced."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            try:
                if _legacy_keras():
                    import tf_keras as keras
                else:
                    import keras
            except Exception as exc:
                raise _Fail(f"cannot import {'tf-keras' if _legacy_keras() else 'Keras'}: {exc}")
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    return keras


def _load(path: str):
    if not os.path.exists(path):
        raise _Fail(f"{path}: no such file")
    if os.path.isdir(path):
        raise _Fail(f"{path}: is a directory, not a .keras or .h5 file")
    with open(path, "rb") as f:
        head = f.read(8)
    h5 = head.startswith(b"\x89HDF")
    if not h5 and not zipfile.is_zipfile(path):
        raise _Fail(f"{path}: not a .keras archive (not a zip file) nor an HDF5 (.h5) file")
    saved_by = ""
    if not h5:
        try:
            with zipfile.ZipFile(path) as z:
                if "config.json" not in z.namelist():
                    raise _Fail(f"{path}: not a Keras model archive (no config.json inside)")
                if "metadata.json" in z.namelist():
                    saved_by = str(json.loads(z.read("metadata.json")).get("keras_version", ""))
        except (zipfile.BadZipFile, ValueError) as exc:
            raise _Fail(f"{path}: corrupt archive ({exc})")
    keras = _quiet_import_keras()
    try:
        with warnings.catch_warnings():  # Keras's deprecation warnings are not the report
            warnings.simplefilter("ignore")
            if _legacy_keras():
                model = keras.models.load_model(path, compile=False)
            else:
                model = keras.saving.load_model(path, compile=False)
    except Exception as exc:  # Keras raises many types; the reader needs one line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        kind = "legacy HDF5 (.h5) file" if h5 else "model"
        hint = ""
        if not _legacy_keras() and (h5 or saved_by.startswith("2.")):
            hint = (" (saved by tf-keras? run with TF_USE_LEGACY_KERAS=1"
                    + (f": it was saved by Keras {saved_by})" if saved_by else ")"))
        raise _Fail(f"{path}: {'tf-keras' if _legacy_keras() else 'Keras'} could not load the "
                    f"{kind}{hint}: {first}")
    return keras, model


def _load_sample(path: str, model):
    """One batch from an .npz file: its one array, its arrays named after the model's inputs,
    or its arrays in order (numpy.savez(path, x) or numpy.savez(path, tokens=..., ...))."""
    import numpy as np
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise _Fail(f"{path}: not a readable .npz file ({first})")
    if not arrays:
        raise _Fail(f"{path}: the .npz file holds no array")
    if len(arrays) == 1:
        return next(iter(arrays.values()))
    names = [getattr(t, "name", "").split(":")[0] for t in getattr(model, "inputs", []) or []]
    if set(arrays) == set(names):
        return [arrays[n] for n in names]
    return list(arrays.values())


def main(argv=None) -> int:
    parser = _Parser(prog="cudnn_check.py", description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a .keras file, or .h5 (tf-keras: TF_USE_LEGACY_KERAS=1)")
    parser.add_argument("--sample", help="an .npz file with one batch of your inputs")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    try:
        args = parser.parse_args(argv)
        if args.sample and not os.path.isfile(args.sample):
            raise _Fail(f"{args.sample}: no such file")
        keras, model = _load(args.model)
        sample = _load_sample(args.sample, model) if args.sample else None
        report = check_model(model, sample=sample)
    except _Fail as exc:
        print(f"cudnn_check: {exc}", file=sys.stderr)
        return 2
    backend = keras.backend.backend()
    rules = f"{'tf-keras' if _legacy_keras() else 'Keras'} {keras.__version__}, {backend} backend"
    if args.json:
        print(json.dumps({
            "model": args.model, "keras": keras.__version__, "backend": backend,
            "legacy_keras": _legacy_keras(), "probe": report.probe, "notes": report.notes,
            "conditions": report.conditions,
            "costs": [dataclasses.asdict(f) for f in report.costs],
            "layers": [{"path": p, "class": c, "verdict": v,
                        "eligible": not any(f.layer == p and not f.is_cost for f in report)}
                       for p, c, v in report.layers],
            "findings": [dataclasses.asdict(f) for f in report],
        }, indent=2))
    elif not report.layers and not report:
        print(f"{args.model}: no LSTM or GRU layer found, nor any other recurrent layer; "
              f"nothing to check ({rules}).")
    else:
        print(f"{args.model} ({rules}):\n{report.probe}")
        for path, cls, verdict in report.layers:
            print(f"{path} ({cls}): {verdict}")
            for f in (f for f in list(report) + report.costs if f.layer == path):
                print(f"  - [{f.criterion}] {f.message}\n    fix: {f.fix}"
                      + (f"\n    see: {f.see}" if f.see else ""))
        for f in (f for f in report if f.layer not in {p for p, _, _ in report.layers}):
            print(f"{f.layer}: [{f.criterion}] {f.message}\n    fix: {f.fix}")
        for note in report.notes + report.conditions:
            print(note)
    return 1 if any(not f.is_cost for f in report) else 0


# --8<-- [start:show]
# Example: python cudnn_check.py (no arguments) checks two small layers.
def _demo() -> None:
    import keras
    good = keras.layers.LSTM(8, name="good")
    slow = keras.layers.LSTM(8, recurrent_dropout=0.2, activation="relu", name="slow")
    assert check_layer(good) == []
    found = check_layer(slow)
    assert [f.criterion for f in found] == ["recurrent_dropout", "activation"], found
    print(f"Keras {keras.__version__}, {keras.backend.backend()} backend")
    for f in found:
        print(f)
    print("good: eligible for cuDNN; slow:", len(found), "problems")
# --8<-- [end:show]


if __name__ == "__main__":
    if len(sys.argv) == 1:
        _demo()
        sys.exit(0)
    sys.exit(main())
