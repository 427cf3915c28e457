"""cudnn_check.py: will this Keras LSTM/GRU take the cuDNN kernel on a GPU?

Copy this one file into your project. It needs only the standard library and Keras/TensorFlow.
It works on Keras 3 objects (`keras`) and Keras 2 objects (`tf_keras`, or `tf.keras` in
TF <= 2.15) and follows the rules of the installed version.

    from cudnn_check import check_layer, check_model, check_mask
    findings = check_model(model)      # [] means every LSTM/GRU is cuDNN-eligible

    python cudnn_check.py MODEL.keras [--json]
    exit 0: every RNN layer is eligible (or there is none), 1: some layer falls back, 2: error
"""
# snippet: timeout=120
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import zipfile

__all__ = ["Finding", "check_layer", "check_model", "check_mask", "main"]


@dataclasses.dataclass
class Finding:
    criterion: str  # short id, e.g. "recurrent_dropout"
    message: str  # what is wrong, in words
    fix: str  # what to change
    layer: str = ""  # path of the layer in the model ("" for a mask)

    def __str__(self) -> str:
        where = f"{self.layer}: " if self.layer else ""
        return f"{where}[{self.criterion}] {self.message} Fix: {self.fix}"


def _version_tuple(text: str) -> tuple[int, int]:
    parts = (text.split(".") + ["0", "0"])[:2]
    return tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in parts)  # type: ignore


def _flavour(obj) -> tuple[str, tuple[int, int]]:
    """("keras3" | "keras2", (major, minor)) for a layer or model object."""
    module = type(obj).__module__
    if module.startswith("tf_keras"):
        import tf_keras
        return "keras2", _version_tuple(tf_keras.__version__)
    if module.startswith("tensorflow.python.keras"):
        import tensorflow as tf
        return "keras2", _version_tuple(tf.__version__)
    import keras
    version = _version_tuple(keras.__version__)
    return ("keras3" if version[0] >= 3 else "keras2"), version


def _kind(layer) -> str | None:
    """"lstm", "gru", "rnn" (generic RNN wrapper around an LSTM/GRU cell) or None."""
    names = [c.__name__ for c in type(layer).__mro__]
    if "LSTM" in names and "RNN" in names:
        return "lstm"
    if "GRU" in names and "RNN" in names:
        return "gru"
    if "RNN" in names and hasattr(layer, "cell"):
        cell_names = [c.__name__ for c in type(layer.cell).__mro__]
        if "LSTMCell" in cell_names or "GRUCell" in cell_names:
            return "rnn"
    return None


def _allowed_activations(flavour: str):
    import tensorflow as tf
    if flavour == "keras3":
        import keras
        return ((keras.activations.tanh, tf.tanh, keras.ops.tanh),
                (keras.activations.sigmoid, tf.sigmoid, keras.ops.sigmoid))
    try:
        import tf_keras as k2
    except ImportError:  # TF <= 2.15: tf.keras is Keras 2
        k2 = tf.keras
    return ((k2.activations.tanh, tf.tanh), (k2.activations.sigmoid, tf.sigmoid))


def _name(fn) -> str:
    return getattr(fn, "__name__", repr(fn))


def check_layer(layer, path: str = "") -> list[Finding]:
    """One Finding per cuDNN criterion the layer breaks; [] means it takes cuDNN on a GPU."""
    path = path or getattr(layer, "name", "")
    kind = _kind(layer)
    if kind is None:
        return []
    if kind == "rnn":
        return [Finding("generic_rnn", f"{type(layer).__name__}({type(layer.cell).__name__}) "
                        "never uses cuDNN: only the LSTM and GRU layers have a cuDNN path.",
                        "Use keras.layers.LSTM(...) or GRU(...) instead of RNN(...Cell(...)).",
                        path)]
    flavour, version = _flavour(layer)
    cell = layer.cell
    tanhs, sigmoids = _allowed_activations(flavour)
    out: list[Finding] = []

    def add(criterion, message, fix):
        out.append(Finding(criterion, message, fix, path))

    if not any(cell.activation is f for f in tanhs):
        add("activation", f"activation is {_name(cell.activation)}, not Keras's own tanh "
            "(an identity test: a function that computes tanh is not enough).",
            'Use activation="tanh" (the default).')
    if not any(cell.recurrent_activation is f for f in sigmoids):
        add("recurrent_activation", f"recurrent_activation is {_name(cell.recurrent_activation)}, "
            "not Keras's own sigmoid.", 'Use recurrent_activation="sigmoid" (the default).')
    if cell.recurrent_dropout:
        add("recurrent_dropout", f"recurrent_dropout={cell.recurrent_dropout:g}: cuDNN has no "
            "dropout between time steps.", "Set recurrent_dropout=0; regularise with dropout= "
            "or a Dropout layer after the RNN instead.")
    if flavour == "keras3" and version < (3, 4) and cell.dropout:
        add("dropout", f"dropout={cell.dropout:g}: Keras {version[0]}.{version[1]} takes the "
            "generic kernel for any dropout (fixed in 3.4).",
            "Upgrade to Keras >= 3.4, or set dropout=0 and add a Dropout layer before the RNN.")
    if layer.unroll:
        add("unroll", "unroll=True: cuDNN runs the loop itself.", "Set unroll=False.")
    if not cell.use_bias:
        add("use_bias", "use_bias=False: the cuDNN kernel always has biases.",
            "Set use_bias=True.")
    if kind == "gru" and not cell.reset_after:
        add("reset_after", "reset_after=False: cuDNN's GRU applies the reset gate after the "
            "matrix product.", "Set reset_after=True (the default since TF 2.0).")
    if flavour == "keras3" and getattr(layer, "use_cudnn", "auto") is False:
        add("use_cudnn", "use_cudnn=False: you opted out of cuDNN.",
            'Set use_cudnn="auto" (or True to get an error instead of a silent fallback).')
    if flavour == "keras2":
        import tensorflow as tf
        if not tf.compat.v1.executing_eagerly_outside_functions():
            add("eager", "eager execution is disabled (tf.compat.v1.disable_eager_execution()): "
                "Keras 2 then never uses cuDNN.", "Remove disable_eager_execution().")
    return out


def _children(layer, path: str):
    """(path, sub-layer) pairs of a wrapper or nested model, in order."""
    forward = getattr(layer, "forward_layer", None)
    backward = getattr(layer, "backward_layer", None)
    if forward is not None and backward is not None:  # Bidirectional
        return [(f"{path}/{forward.name}", forward), (f"{path}/{backward.name}", backward)]
    inner = getattr(layer, "layer", None)
    if inner is not None and _kind(layer) is None and hasattr(inner, "name"):  # TimeDistributed
        return [(f"{path}/{inner.name}", inner)]
    if _kind(layer) is None and hasattr(layer, "layers"):  # nested Model / Sequential
        return [(f"{path}/{sub.name}", sub) for sub in layer.layers]
    return []


def rnn_layers(model, path: str | None = None):
    """Every (path, layer) that is an LSTM, GRU or RNN around their cells, depth first."""
    path = model.name if path is None else path
    found = []
    for child_path, child in _children(model, path):
        if _kind(child) is not None:
            found.append((child_path, child))
        else:
            found.extend(rnn_layers(child, child_path))
    return found


def check_model(model) -> list[Finding]:
    """Findings for every LSTM/GRU in the model, inside wrappers and nested models too."""
    if _kind(model) is not None:
        return check_layer(model)
    findings: list[Finding] = []
    for path, layer in rnn_layers(model):
        findings.extend(check_layer(layer, path))
    return findings


def check_mask(mask, padding_value=None) -> list[Finding]:
    """Is this mask acceptable to cuDNN? Pass a boolean mask (batch, time), or a padded batch
    (batch, time[, features]) with the padding_value it was padded with."""
    import numpy as np
    data = np.asarray(mask)
    if padding_value is not None:
        keep = data != padding_value
        mask_ = keep if keep.ndim == 2 else keep.any(axis=tuple(range(2, keep.ndim)))
    else:
        if data.ndim != 2:
            raise ValueError(f"a mask must have shape (batch, time), got shape {data.shape}")
        mask_ = data.astype(bool)
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


# --------------------------------------------------------------------------- command line
class _Fail(Exception):
    """A problem to report in one line on stderr, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        raise _Fail(f"usage error: {message}")


def _quiet_import_keras():
    """Import Keras with TensorFlow's start-up log lines (C++, on fd 2) silenced."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            try:
                import keras
            except Exception as exc:
                raise _Fail(f"cannot import Keras: {exc}")
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    return keras


def _load(path: str):
    if not os.path.exists(path):
        raise _Fail(f"{path}: no such file")
    if os.path.isdir(path):
        raise _Fail(f"{path}: is a directory, not a .keras file")
    with open(path, "rb") as f:
        head = f.read(8)
    if head.startswith(b"\x89HDF"):
        raise _Fail(f"{path}: legacy HDF5 (.h5) file; load it with your Keras version and "
                    "save it as .keras, or call check_model() on the loaded model")
    if not zipfile.is_zipfile(path):
        raise _Fail(f"{path}: not a .keras archive (not a zip file)")
    try:
        with zipfile.ZipFile(path) as z:
            if "config.json" not in z.namelist():
                raise _Fail(f"{path}: not a Keras model archive (no config.json inside)")
    except zipfile.BadZipFile as exc:
        raise _Fail(f"{path}: corrupt archive ({exc})")
    keras = _quiet_import_keras()
    try:
        model = keras.saving.load_model(path, compile=False)
    except Exception as exc:  # Keras raises many types; the reader needs one line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise _Fail(f"{path}: Keras could not load the model: {first}")
    return model


def main(argv=None) -> int:
    parser = _Parser(prog="cudnn_check.py", description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a .keras file")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    try:
        args = parser.parse_args(argv)
        model = _load(args.model)
        layers = rnn_layers(model) if _kind(model) is None else [(model.name, model)]
        findings = check_model(model)
    except _Fail as exc:
        print(f"cudnn_check: {exc}", file=sys.stderr)
        return 2
    bad = {f.layer for f in findings}
    if args.json:
        print(json.dumps({
            "model": args.model,
            "layers": [{"path": p, "class": type(l).__name__, "eligible": p not in bad}
                       for p, l in layers],
            "findings": [dataclasses.asdict(f) for f in findings],
        }, indent=2))
    elif not layers:
        print(f"{args.model}: no LSTM or GRU layer found; nothing to check.")
    else:
        for path, layer in layers:
            mine = [f for f in findings if f.layer == path]
            verdict = "falls back to the generic kernel" if mine else "uses cuDNN on a GPU"
            print(f"{path} ({type(layer).__name__}): {verdict}")
            for f in mine:
                print(f"  - [{f.criterion}] {f.message}\n    fix: {f.fix}")
    return 1 if findings else 0


# --8<-- [start:show]
# Example: python cudnn_check.py (no arguments) checks two small layers.
def _demo() -> None:
    import keras
    good = keras.layers.LSTM(8, name="good")
    slow = keras.layers.LSTM(8, recurrent_dropout=0.2, activation="relu", name="slow")
    assert check_layer(good) == []
    found = check_layer(slow)
    assert [f.criterion for f in found] == ["activation", "recurrent_dropout"], found
    for f in found:
        print(f)
    print("good: eligible for cuDNN; slow:", len(found), "problems")
# --8<-- [end:show]


if __name__ == "__main__":
    if len(sys.argv) == 1:
        _demo()
        sys.exit(0)
    sys.exit(main())
