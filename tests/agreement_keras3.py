"""Does snippets/cudnn_check.py agree with one Keras 3 backend's own choice of kernel?

Run as a program in a process of that backend, because Keras reads KERAS_BACKEND once, when it
is imported (tests/content/test_cudnn_check.py runs it in each backend's process):

    KERAS_BACKEND=jax python tests/agreement_keras3.py --configs 500 --masks 60

For each generated layer it asks Keras itself, through tests/keras3_witness.py (a GPU pretended
in the framework, below the functions the checker's probe and the criteria helpers patch): did
Keras's unchanged code call the framework's cuDNN op? Then it asks the checker's rules
(check_model(probe=False), check_mask). It prints one JSON object: the backend, how many layers
and masks were compared, how many of them Keras sent to cuDNN, every disagreement, and how many
layers or masks a checker with one planted wrong rule gets wrong (it must get some wrong: the
comparison would not catch a wrong checker otherwise). Exit status 1 on a disagreement or a
planted rule that went unnoticed.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BACKEND = os.environ.setdefault("KERAS_BACKEND", "tensorflow")
sys.path.insert(0, str(REPO / "snippets"))
sys.path.insert(0, str(REPO / "tests"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

import keras  # noqa: E402
import keras3_witness  # noqa: E402

import cudnn_check  # noqa: E402

assert keras.backend.backend() == BACKEND, (keras.backend.backend(), BACKEND)


def own_functions():
    """Each backend's own tanh and sigmoid, which may or may not be on its list."""
    if BACKEND == "tensorflow":
        import tensorflow as tf
        return tf.tanh, tf.sigmoid
    if BACKEND == "jax":
        import jax
        import jax.numpy as jnp
        return jnp.tanh, jax.nn.sigmoid
    import torch
    return torch.tanh, torch.sigmoid


class _GenericLoop(Exception):
    """Raised where Keras starts its generic loop: the choice is made by then."""


def _generic_loop(*args, **kwargs):
    raise _GenericLoop


def keras_calls_cudnn(layer, x, **kwargs) -> bool:
    """Keras's own answer, from the witness. On TensorFlow the cuDNN op fails on this CPU, so a
    layer with use_cudnn=True raises afterwards (a ValueError): the call made counts as cuDNN
    chosen. Keras's generic loop (backend.rnn) is not run: it comes after the choice, and
    compiling it for every layer was most of this run's time on JAX."""
    layer.build(x.shape)  # outside the witness: a JAX trace must not create the weights

    def call(a):
        try:
            layer(a, **kwargs)
        except ValueError as err:
            if "use_cudnn=True was specified" not in str(err):
                raise
    saved = keras.src.backend.rnn
    keras.src.backend.rnn = _generic_loop
    try:
        return keras3_witness.cudnn_directions(call, x, stop=_GenericLoop) > 0
    finally:
        keras.src.backend.rnn = saved


@contextlib.contextmanager
def planted(name: str, wrong):
    """The checker with `cudnn_check.<name>` replaced by `wrong(real, *args, **kwargs)`."""
    real = getattr(cudnn_check, name)
    setattr(cudnn_check, name, lambda *args, **kwargs: wrong(real, *args, **kwargs))
    try:
        yield
    finally:
        setattr(cudnn_check, name, real)


def _use_bias_keeps_cudnn(real, *args, **kwargs):
    """Wrong: use_bias=False keeps cuDNN (a layer rule dropped)."""
    found = real(*args, **kwargs)
    found[:] = [f for f in found if f.criterion != "use_bias"]
    return found


def _only_empty_rows_matter(real, *args, **kwargs):
    """Wrong: any mask without a fully masked row keeps cuDNN (the padding rule dropped)."""
    return [f for f in real(*args, **kwargs) if f.criterion == "mask_fully_masked"]


def random_layer(rng: random.Random):
    """A layer one or two arguments away from the defaults, most of the time: each value that
    breaks a rule is drawn rarely, so that every rule is often the only one broken."""
    tanh, sigmoid = own_functions()

    def pick(default, *others, p_default=0.7):
        return default if rng.random() < p_default else rng.choice(others)

    kind = rng.choice(["lstm", "lstm", "gru"])
    cfg = dict(
        activation=pick("tanh", tanh, keras.ops.tanh, lambda v: keras.ops.tanh(v), "relu",
                        "sigmoid", None, p_default=0.5),
        recurrent_activation=pick("sigmoid", sigmoid, keras.ops.sigmoid, "hard_sigmoid",
                                  lambda v: keras.ops.sigmoid(v), "tanh", p_default=0.5),
        dropout=pick(0.0, 0.3, p_default=0.6),
        recurrent_dropout=pick(0.0, 0.25, -0.1, p_default=0.8),  # Keras clips -0.1 to 0
        unroll=pick(False, True, p_default=0.85),
        use_bias=pick(True, False, p_default=0.85),
        go_backwards=rng.random() < 0.3,
        return_sequences=rng.random() < 0.5,
        return_state=rng.random() < 0.3,
        use_cudnn=pick("auto", False, True, 0, 1, p_default=0.6),
    )
    if kind == "gru":
        cfg["reset_after"] = pick(True, False, p_default=0.8)
    layer = (keras.layers.LSTM if kind == "lstm" else keras.layers.GRU)(3, **cfg)
    described = {k: getattr(v, "__name__", v) for k, v in cfg.items()}
    serializable = all(isinstance(cfg[k], (str, type(None)))
                       for k in ("activation", "recurrent_activation"))
    if serializable and not cfg["go_backwards"] and rng.random() < 0.3:  # copied via its config
        layer = keras.layers.Bidirectional(layer)
        described["wrapper"] = "Bidirectional"
    return kind, described, layer


def compare_layers(n: int, seed: int = 0) -> tuple[list[dict], int, int]:
    """The disagreements, how many layers Keras sent to cuDNN, and how many a checker with a
    planted wrong layer rule gets wrong."""
    rng = random.Random(seed)
    x = np.random.default_rng(seed).normal(size=(2, 3, 2)).astype("float32")
    mismatches, eligible, caught = [], 0, 0
    for i in range(n):
        kind, cfg, layer = random_layer(rng)
        training = rng.random() < 0.5
        keras_says = keras_calls_cudnn(layer, x, training=training)
        eligible += keras_says
        findings = list(cudnn_check.check_model(layer, probe=False))  # the rules, not the probe
        with planted("_keras3_findings", _use_bias_keeps_cudnn):
            caught += (list(cudnn_check.check_model(layer, probe=False)) == []) != keras_says
        if (findings == []) != keras_says:
            mismatches.append({"i": i, "kind": kind, "config": cfg, "training": training,
                               "keras_calls_cudnn": keras_says,
                               "findings": [f.criterion for f in findings]})
    return mismatches, eligible, caught


def compare_masks(n: int, seed: int = 1) -> tuple[list[dict], int, int]:
    """The disagreements, how many masks Keras sent to cuDNN, and how many a checker with a
    planted wrong mask rule gets wrong."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, 4, 2)).astype("float32")
    mismatches, eligible, caught = [], 0, 0
    for i in range(n):
        if rng.random() < 0.5:  # right-padded, some rows possibly empty
            mask = np.arange(4)[None, :] < rng.integers(0, 5, size=(3, 1))
        else:
            mask = rng.random((3, 4)) < rng.random()
        layer = keras.layers.LSTM(3)
        keras_says = keras_calls_cudnn(layer, x, mask=mask)
        eligible += keras_says
        findings = cudnn_check.check_mask(mask)
        with planted("check_mask", _only_empty_rows_matter):
            caught += (cudnn_check.check_mask(mask) == []) != keras_says
        if (findings == []) != keras_says:
            mismatches.append({"i": i, "mask": mask.tolist(), "keras_calls_cudnn": keras_says,
                               "findings": [f.criterion for f in findings]})
    return mismatches, eligible, caught


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", type=int, default=500)
    ap.add_argument("--masks", type=int, default=60)
    args = ap.parse_args()
    layers, eligible_layers, caught_layers = compare_layers(args.configs)
    masks, eligible_masks, caught_masks = compare_masks(args.masks)
    planted_rules = {_use_bias_keeps_cudnn.__doc__.strip(): caught_layers,
                     _only_empty_rows_matter.__doc__.strip(): caught_masks}
    print(json.dumps({"backend": keras.backend.backend(), "keras": keras.__version__,
                      "configs": args.configs, "masks": args.masks,
                      "eligible_layers": eligible_layers, "eligible_masks": eligible_masks,
                      "mismatches": layers + masks, "planted": planted_rules}, default=str))
    return 1 if layers or masks or not all(planted_rules.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
