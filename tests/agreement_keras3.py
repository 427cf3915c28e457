"""Does snippets/cudnn_check.py agree with one Keras 3 backend's own choice of kernel?

Run in its own process, because Keras reads KERAS_BACKEND once, when it is imported
(tests/test_cudnn_check.py does this for each backend):

    KERAS_BACKEND=jax python tests/agreement_keras3.py --configs 500 --masks 60

For each generated layer it asks Keras itself, with a GPU pretended by the backend's
snippets/criteria/<backend>/_pretend_gpu.py: did Keras's unchanged decision code call cuDNN?
Then it asks the checker. It prints one JSON object: the backend, how many layers and masks were
compared, how many of them Keras sent to cuDNN, and every disagreement. Exit status 1 when there
is one.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BACKEND = os.environ.get("KERAS_BACKEND", "tensorflow")
HELPERS = {"tensorflow": "tf_backend", "jax": "jax_backend", "torch": "torch_backend"}
sys.path.insert(0, str(REPO / "snippets"))
sys.path.insert(0, str(REPO / "snippets" / "criteria" / HELPERS[BACKEND]))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
from _pretend_gpu import pretend_gpu  # noqa: E402  (sets and checks KERAS_BACKEND)

import keras  # noqa: E402

import cudnn_check  # noqa: E402


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


def inputs(x):
    """What the layer is called with: CUDA-looking tensors on the PyTorch backend."""
    if BACKEND == "torch":
        from _pretend_gpu import cuda_looking
        return cuda_looking(x)
    return x


class _GenericLoop(Exception):
    """Raised where Keras starts its generic loop: the choice is made by then."""


def _generic_loop(*args, **kwargs):
    raise _GenericLoop


def keras_calls_cudnn(layer, x, **kwargs) -> bool:
    """Keras's own answer. The recorder fails each cuDNN call, so a layer with use_cudnn=True
    may raise afterwards: a call made counts as cuDNN chosen. Keras's generic loop
    (backend.rnn) is not run: it comes after the choice, and compiling it for every layer was
    most of this run's time on JAX."""
    saved = keras.src.backend.rnn
    keras.src.backend.rnn = _generic_loop
    try:
        with pretend_gpu() as calls:
            try:
                layer(inputs(x), **kwargs)
            except _GenericLoop:
                pass
            except ValueError as err:
                if "use_cudnn=True was specified" not in str(err):
                    raise
    finally:
        keras.src.backend.rnn = saved
    return bool(calls)


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


def compare_layers(n: int, seed: int = 0) -> tuple[list[dict], int]:
    """The disagreements, and how many layers Keras sent to cuDNN."""
    rng = random.Random(seed)
    x = np.random.default_rng(seed).normal(size=(2, 3, 2)).astype("float32")
    mismatches, eligible = [], 0
    for i in range(n):
        kind, cfg, layer = random_layer(rng)
        training = rng.random() < 0.5
        keras_says = keras_calls_cudnn(layer, x, training=training)
        eligible += keras_says
        findings = list(cudnn_check.check_model(layer, probe=False))  # the rules, not the probe
        if (findings == []) != keras_says:
            mismatches.append({"i": i, "kind": kind, "config": cfg, "training": training,
                               "keras_calls_cudnn": keras_says,
                               "findings": [f.criterion for f in findings]})
    return mismatches, eligible


def compare_masks(n: int, seed: int = 1) -> tuple[list[dict], int]:
    """The disagreements, and how many masks Keras sent to cuDNN."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, 4, 2)).astype("float32")
    mismatches, eligible = [], 0
    for i in range(n):
        if rng.random() < 0.5:  # right-padded, some rows possibly empty
            mask = np.arange(4)[None, :] < rng.integers(0, 5, size=(3, 1))
        else:
            mask = rng.random((3, 4)) < rng.random()
        layer = keras.layers.LSTM(3)
        keras_says = keras_calls_cudnn(layer, x, mask=mask)
        eligible += keras_says
        findings = cudnn_check.check_mask(mask)
        if (findings == []) != keras_says:
            mismatches.append({"i": i, "mask": mask.tolist(), "keras_calls_cudnn": keras_says,
                               "findings": [f.criterion for f in findings]})
    return mismatches, eligible


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", type=int, default=500)
    ap.add_argument("--masks", type=int, default=60)
    args = ap.parse_args()
    layers, eligible_layers = compare_layers(args.configs)
    masks, eligible_masks = compare_masks(args.masks)
    print(json.dumps({"backend": keras.backend.backend(), "keras": keras.__version__,
                      "configs": args.configs, "masks": args.masks,
                      "eligible_layers": eligible_layers, "eligible_masks": eligible_masks,
                      "mismatches": layers + masks}, default=str))
    return 1 if layers or masks else 0


if __name__ == "__main__":
    sys.exit(main())
