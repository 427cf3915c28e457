"""What the troubleshooting page says only a GPU shows ("not reproduced here"), reproduced on a GPU
(`pytest -m gpu`, `make gpu-run`). Each test names the entry it checks (troubleshooting/<page>.md#...)
and the thread it reproduces; data/threads.yml lists those threads, and tests/claims/test_threads.py
requires a test here for every answer marked `shown: gpu`.

Keras runs in a child process with KERAS_BACKEND=tensorflow, so that the backend is the one the
entry describes whatever this process imported first. A framework that is not installed skips
its tests, naming it; one that is installed but cannot see the GPU fails.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

from pipeline.running import device

ON_GPU = device.has_gpu()


def gpu_test(fn):
    """Marked gpu (CPU CI deselects it); skipped, saying so, where there is no GPU."""
    return pytest.mark.gpu(pytest.mark.skipif(not ON_GPU, reason="needs a GPU")(fn))


def need(module: str, name: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"needs {name}: not installed for this Python")


def cuda_torch():
    need("torch", "PyTorch")
    import torch
    assert torch.cuda.is_available() and torch.backends.cudnn.is_available(), \
        "PyTorch is installed but sees no CUDA GPU with cuDNN"
    return torch


def run_child(code: str, env: dict | None = None, timeout: float = 600) -> dict:
    """Run code in a fresh Python; it prints one JSON object as its last line."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **(env or {})})
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- PyTorch ---------------------------------------------------------------------------------

NOT_SUPPORTED = ("cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed "
                 "in a non-contiguous input.")


@gpu_test
def test_an_lstm_over_more_than_65535_steps_fails_in_one_cudnn_call_and_works_in_pieces():
    """troubleshooting/runtime.md#pytorch-long-sequence: pytorch/pytorch#133751's script (3 layers,
    4 features, batch 2): 65,535 steps run, 65,536 fail with the quoted message; the same
    sequence in pieces, the state handed on, equals one call without cuDNN."""
    torch = cuda_torch()
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(input_size=4, hidden_size=24, num_layers=3).cuda()
    with torch.no_grad():
        lstm(torch.randn(65_535, 2, 4, device="cuda"))
        x = torch.randn(65_536, 2, 4, device="cuda")
        with pytest.raises(RuntimeError) as err:
            lstm(x)
        assert NOT_SUPPORTED in str(err.value)
        with torch.backends.cudnn.flags(enabled=False):
            whole = lstm(x)[0]
        outputs, state = [], None
        for piece in torch.split(x, 65_535):
            out, state = lstm(piece, state)
            outputs.append(out)
        assert torch.allclose(torch.cat(outputs), whole, atol=1e-4)


@gpu_test
def test_a_second_derivative_through_a_cudnn_lstm_needs_cudnn_off():
    """troubleshooting/pytorch.md#pytorch-double-backward: the quoted NotImplementedError
    (mit-gfx/ContinuousParetoMTL#4, pytorch/pytorch#5261); with the forward pass run without
    cuDNN, the gradient penalty works and equals the CPU's."""
    torch = cuda_torch()
    torch.manual_seed(0)
    cpu_lstm = torch.nn.LSTM(3, 8, batch_first=True)
    x_cpu = torch.randn(4, 5, 3)

    def penalty(lstm, x):
        x = x.clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(lstm(x)[0].sum(), x, create_graph=True)
        value = grad.pow(2).sum()
        value.backward()
        return value.item()

    lstm = torch.nn.LSTM(3, 8, batch_first=True).cuda()
    lstm.load_state_dict(cpu_lstm.state_dict())
    with pytest.raises(NotImplementedError) as err:
        penalty(lstm, x_cpu.cuda())
    assert "Double backwards is not supported for CuDNN RNNs" in str(err.value)
    assert "the derivative for '_cudnn_rnn_backward' is not implemented" in str(err.value)
    with torch.backends.cudnn.flags(enabled=False):
        on_gpu = penalty(lstm, x_cpu.cuda())
    assert on_gpu == pytest.approx(penalty(cpu_lstm, x_cpu), rel=1e-4)


@gpu_test
def test_with_cuda_launch_blocking_an_error_before_the_rnn_is_reported_where_it_happens():
    """troubleshooting/runtime.md#cudnn-status-rnn: with CUDA_LAUNCH_BLOCKING=1, a token id past an
    Embedding's vocabulary is reported by the Embedding, not by the LSTM after it."""
    need("torch", "PyTorch")
    result = run_child("""
        import json, torch
        from torch import nn
        embed = nn.Embedding(500, 16).cuda()
        lstm = nn.LSTM(16, 32, batch_first=True).cuda()
        tokens = torch.tensor([[1, 2, 500]], device="cuda")
        where, message = "nowhere", ""
        try:
            hidden = embed(tokens)
            where = "lstm"
            lstm(hidden)[0].sum().item()
        except RuntimeError as err:
            where = "embedding" if where == "nowhere" else where
            message = str(err)
        print(json.dumps({"where": where, "message": message}))
        """, env={"CUDA_LAUNCH_BLOCKING": "1"})
    assert result["where"] == "embedding", result
    assert "CUDA error" in result["message"], result


@gpu_test
def test_a_bfloat16_lstm_runs_on_the_gpu():
    """troubleshooting/pytorch.md#pytorch-bf16-lstm: pytorch/pytorch#116925's error is gone in the
    installed PyTorch: an nn.LSTM in bfloat16 runs forward and backward on the GPU."""
    torch = cuda_torch()
    lstm = torch.nn.LSTM(10, 20, 2).to(device="cuda", dtype=torch.bfloat16)
    x = torch.randn(5, 3, 10, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    out, _ = lstm(x)
    out.float().sum().backward()
    assert out.dtype == torch.bfloat16 and x.grad is not None


# --- Keras 3 on TensorFlow, each in a child process ---------------------------------------------

KERAS_TF = """
    import json, os
    os.environ["KERAS_BACKEND"] = "tensorflow"
    import importlib
    import numpy as np
    import tensorflow as tf
    import keras
    assert tf.config.list_physical_devices("GPU"), "TensorFlow is installed but sees no GPU"
    tf_rnn = importlib.import_module("keras.src.backend.tensorflow.rnn")
    cudnn_calls = []

    def counting(name):
        original = getattr(tf_rnn, name)
        def wrapper(*args, **kwargs):
            cudnn_calls.append(name)
            return original(*args, **kwargs)
        setattr(tf_rnn, name, wrapper)

    counting("_cudnn_lstm")
    counting("_cudnn_gru")
"""


def keras_tf(code: str) -> dict:
    need("tensorflow", "TensorFlow")
    need("keras", "Keras 3")
    return run_child(KERAS_TF + textwrap.dedent(code))


@gpu_test
def test_gru_return_state_gives_one_state_of_shape_batch_units_on_cudnn():
    """troubleshooting/numbers.md#gru-return-state: keras-team/keras#20173, tensorflow/tensorflow#83119
    and #74475. On the GPU, GRU(return_state=True) takes cuDNN and returns the output and one
    state of shape (batch, units), equal to the layer without cuDNN."""
    result = keras_tf("""
        x = np.random.default_rng(0).uniform(size=(4, 3, 5)).astype("float32")
        gru = keras.layers.GRU(10, return_sequences=True, return_state=True)
        out = gru(x)
        plain = keras.layers.GRU(10, return_sequences=True, return_state=True, use_cudnn=False)
        plain.build(x.shape)
        plain.set_weights(gru.get_weights())
        ref = plain(x)
        print(json.dumps({"calls": cudnn_calls, "shapes": [list(o.shape) for o in out],
                          "same": [bool(np.allclose(a, b, atol=1e-5)) for a, b in zip(out, ref)]}))
        """)
    assert result["calls"] and result["calls"][0] == "_cudnn_gru", result
    assert result["shapes"] == [[4, 3, 10], [4, 10]], result
    assert result["same"] == [True, True], result


@gpu_test
def test_a_stateful_lstm_takes_cudnn_and_carries_its_state():
    """troubleshooting/keras.md#keras-stateful: on the GPU a stateful LSTM calls cuDNN, two calls of 5
    steps equal one of 10, and fit() with a smaller last batch fails (tensorflow/tensorflow#86310,
    #64061)."""
    result = keras_tf("""
        rng = np.random.default_rng(0)
        x = rng.normal(size=(4, 10, 3)).astype("float32")
        model = keras.Sequential([keras.Input(batch_shape=(4, 5, 3)),
                                  keras.layers.LSTM(8, stateful=True)])
        whole = keras.layers.LSTM(8)
        whole.build((4, 10, 3))
        whole.set_weights(model.get_weights())
        model.layers[0].reset_state()
        model(x[:, :5])
        halves = model(x[:, 5:])
        same = bool(np.allclose(halves, whole(x), atol=1e-5))
        model.compile("adam", "mse")
        try:
            model.fit(rng.normal(size=(10, 5, 3)).astype("float32"),
                      rng.normal(size=(10, 8)).astype("float32"), batch_size=4, verbose=0)
            fit = "trained"
        except tf.errors.InvalidArgumentError as err:
            fit = "InvalidArgumentError"
        print(json.dumps({"calls": cudnn_calls, "same": same, "fit": fit}))
        """)
    assert "_cudnn_lstm" in result["calls"], result
    assert result["same"] is True, result
    assert result["fit"] == "InvalidArgumentError", result


@gpu_test
def test_use_cudnn_false_trains_on_the_gpu_without_the_cudnn_call():
    """troubleshooting/runtime.md#dornn-failed, step 2 (tensorflow/tensorflow#99870, #105092): an LSTM
    trains through cuDNN by default; with use_cudnn=False Keras never calls cuDNN and fit() still
    trains on the GPU."""
    result = keras_tf("""
        rng = np.random.default_rng(0)
        x = rng.normal(size=(32, 12, 3)).astype("float32")
        y = rng.normal(size=(32, 1)).astype("float32")
        runs = {}
        for label, kwargs in (("default", {}), ("use_cudnn=False", {"use_cudnn": False})):
            cudnn_calls.clear()
            model = keras.Sequential([keras.Input((12, 3)), keras.layers.LSTM(8, **kwargs),
                                      keras.layers.Dense(1)])
            model.compile("adam", "mse")
            history = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
            runs[label] = {"calls": len(cudnn_calls),
                           "finite": bool(np.isfinite(history.history["loss"]).all()),
                           "device": model.weights[0].value.device}
        print(json.dumps(runs))
        """)
    assert result["default"]["calls"] > 0, result
    assert result["use_cudnn=False"]["calls"] == 0, result
    for run in result.values():
        assert run["finite"] and "GPU" in run["device"], result


# --- JAX ---------------------------------------------------------------------------------------

@gpu_test
def test_jax_rnn_with_empty_rows_given_length_1_and_masked():
    """troubleshooting/runtime.md#jax-rnn-zero-length: jax-ml/jax#17966 (cuDNN's RNN fails on a
    length of 0 in jax.experimental.rnn). The page's fix, run on cuDNN: the empty row gets a
    length of 1 and its output is masked; the forward and backward passes give finite numbers,
    the empty row's output is zeros, and the other row's output is the one it has alone. Runs in
    a child process so that JAX does not share this process's GPU memory with PyTorch."""
    need("jax", "JAX")
    result = run_child("""
        import json
        import jax, jax.numpy as jnp
        from jax.experimental import rnn
        assert jax.devices()[0].platform == "gpu", jax.devices()
        I, H, L = 3, 4, 1
        w = rnn.init_lstm_weight(jax.random.PRNGKey(0), I, H, L, False)
        x = jax.random.normal(jax.random.PRNGKey(1), (2, 5, I))
        sizes = dict(input_size=I, hidden_size=H, num_layers=L, dropout=False, bidirectional=False)
        lengths = jnp.array([5, 0], dtype=jnp.int32)

        def masked(x, w):
            zeros = jnp.zeros((L, x.shape[0], H))
            y, h, c = rnn.lstm(x, zeros, zeros, w, jnp.maximum(lengths, 1), **sizes)
            return jnp.where((lengths > 0)[:, None, None], y, 0)

        y = masked(x, w)
        grads = jax.grad(lambda x, w: masked(x, w).sum(), argnums=(0, 1))(x, w)
        zeros = jnp.zeros((L, 1, H))
        alone = rnn.lstm(x[:1], zeros, zeros, w, lengths[:1], **sizes)[0]
        print(json.dumps({
            "finite": bool(jnp.isfinite(y).all()) and all(bool(jnp.isfinite(g).all()) for g in grads),
            "empty_row_zeros": bool((y[1] == 0).all()),
            "other_row_alone": bool(jnp.allclose(y[0], alone[0], atol=1e-5)),
        }))
        """, env={"XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
    assert result == {"finite": True, "empty_row_zeros": True, "other_row_alone": True}, result
