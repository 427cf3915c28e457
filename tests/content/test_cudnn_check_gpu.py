"""The checker's verdicts are what really runs on a GPU (`pytest -m gpu`, `make gpu-run`), each
observed in the framework: the ops TensorFlow's profiler saw executed, PyTorch's profiler and the
warning PyTorch raises, tf-keras's own runtime flag; each with a negative control.

Where there is no GPU, CPU twins (not marked gpu) run the same instruments on the CPU, with a GPU
pretended where the question is what the library attempts: they show that each instrument sees
what the GPU test relies on (an eager cuDNN attempt that failed and fell back does not pass).

A framework that is not installed skips its tests, naming it. On a machine with a GPU
(pipeline.device.has_gpu(): nvidia-smi names one), a framework that is installed but cannot see
the GPU fails: that is a broken install, not a pass."""
from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO
from pipeline.running import device

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(REPO / "snippets"))
import cudnn_check  # noqa: E402

ON_GPU = device.has_gpu()


def gpu_test(fn):
    """Marked gpu (CPU CI deselects it); skipped, saying so, where there is no GPU."""
    return pytest.mark.gpu(pytest.mark.skipif(not ON_GPU, reason="needs a GPU")(fn))


cpu_only = pytest.mark.skipif(ON_GPU, reason="the CPU twin; -m gpu runs the GPU test")
CONTIGUOUS = "RNN module weights are not part of single contiguous chunk of memory"
CUDNN_TORCH_OP = "aten::_cudnn_rnn"


def _tensorflow():
    return pytest.importorskip("tensorflow", reason="needs TensorFlow")


def _tensorflow_gpu():
    tf = _tensorflow()
    assert tf.config.list_logical_devices("GPU"), (
        f"nvidia-smi sees a GPU but TensorFlow {tf.__version__} does not (a CPU-only build, or "
        "its CUDA libraries are missing)")
    return tf


def _keras3_tensorflow():
    _tensorflow()
    pytest.importorskip("keras", reason="needs Keras 3")
    import keras
    assert keras.backend.backend() == "tensorflow", (
        "this module runs Keras 3 on TensorFlow in the test process: unset KERAS_BACKEND")
    return keras


def _torch_gpu():
    torch = pytest.importorskip("torch", reason="needs PyTorch")
    assert torch.cuda.is_available(), (
        f"nvidia-smi sees a GPU but PyTorch {torch.__version__} does not (a CPU-only build?)")
    return torch


# ----------------------------------------------------------------- instruments
def tf_executed_ops(tf, fn) -> list[str]:
    """The op types TensorFlow's profiler saw executed while fn ran: eager ops (host events
    "EagerLocalExecute: Type") and the ops of a tf.function ("node/name:Type")."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    with tempfile.TemporaryDirectory(prefix="tf-profile-") as logdir:
        tf.profiler.experimental.start(logdir)
        try:
            fn()
        finally:
            tf.profiler.experimental.stop()
        (path,) = Path(logdir).rglob("*.xplane.pb")
        space = xplane_pb2.XSpace.FromString(path.read_bytes())
    ops = []
    for plane in space.planes:
        names = {i: m.name for i, m in plane.event_metadata.items()}
        for line in plane.lines:
            for event in line.events:
                m = re.match(r"EagerLocalExecute: (\w+)$|[^\s:]+:(\w+)$",
                             names.get(event.metadata_id, ""))
                if m:
                    ops.append(m.group(1) or m.group(2))
    return ops


def cudnn_ran(ops) -> bool:
    """TensorFlow ran its cuDNN op and did not fall back: the generic loop's matrix products
    (each time step's MatMul) did not run. An eager cuDNN call that fails is caught by Keras,
    which then runs the loop: that shows both."""
    return "CudnnRNNV3" in ops and not any("MatMul" in op for op in ops)


def generic_ran(ops) -> bool:
    return "CudnnRNNV3" not in ops and any("MatMul" in op for op in ops)


def _pretend_tf_gpu():
    """A GPU listed by tf.config (tests/keras3_witness.py): Keras 3 then calls TensorFlow's
    cuDNN op, which has no CPU kernel, fails, and Keras falls back."""
    import tensorflow as tf
    import keras3_witness
    return keras3_witness.gpu_listed(tf.config)


def _masked_lstm(keras):
    inp = keras.Input((6,), dtype="int32")
    x = keras.layers.Embedding(10, 4, mask_zero=True)(inp)
    return keras.Model(inp, keras.layers.LSTM(8, name="enc")(x), name="m")


def _paddings(keras):
    seqs = [[3, 7, 2, 5], [5, 1], [4, 4, 4, 4, 4, 4]]
    return (keras.utils.pad_sequences(seqs, maxlen=6, padding="post"),
            keras.utils.pad_sequences(seqs, maxlen=6, padding="pre"))


# ----------------------------------------------------------------- Keras 3 on TensorFlow
@gpu_test
@pytest.mark.parametrize("kwargs, eligible", [({}, True), ({"recurrent_dropout": 0.2}, False),
                                              ({"unroll": True}, False)])
def test_keras3_tensorflow_runs_cudnn_exactly_when_checker_says(kwargs, eligible):
    """Eager and compiled: the profiler shows CudnnRNNV3 executed and no generic loop for an
    eligible LSTM, and the generic loop for an ineligible one."""
    tf = _tensorflow_gpu()
    keras = _keras3_tensorflow()
    x = tf.random.normal((8, 10, 4))
    layer = keras.layers.LSTM(16, **kwargs)
    layer(x)  # built outside the profile
    compiled = tf.function(layer)
    compiled(x)
    eager_ops = tf_executed_ops(tf, lambda: layer(x))
    graph_ops = tf_executed_ops(tf, lambda: compiled(x))
    if eligible:
        assert cudnn_ran(eager_ops), sorted(set(eager_ops))
        assert cudnn_ran(graph_ops), sorted(set(graph_ops))
    else:
        assert generic_ran(eager_ops) and generic_ran(graph_ops), sorted(set(graph_ops))
    assert (cudnn_check.check_layer(layer) == []) is eligible


@gpu_test
def test_keras3_tensorflow_masked_lstm_on_right_and_left_padded_batches():
    """The criteria page's padding rule, on the GPU: a right-padded batch runs cuDNN; a
    left-padded one runs the generic loop in an eager call and stops a compiled model with
    Keras's error. The checker says so for each batch."""
    tf = _tensorflow_gpu()
    keras = _keras3_tensorflow()
    model = _masked_lstm(keras)
    post, pre = _paddings(keras)
    model(post)
    assert cudnn_ran(tf_executed_ops(tf, lambda: model(post)))
    assert generic_ran(tf_executed_ops(tf, lambda: model(pre)))
    compiled = tf.function(model)
    assert cudnn_ran(tf_executed_ops(tf, lambda: compiled(post)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="right-padded sequences"):
        compiled(pre)
    assert cudnn_check.check_model(model, sample=post) == []
    assert [f.criterion for f in cudnn_check.check_model(model, sample=pre)] == [
        "mask_right_padded"]


@cpu_only
def test_tf_profiler_twin_tells_cudnn_from_an_eager_fallback():
    """On the CPU: the profiler sees the ops that ran. Plain, an LSTM runs the generic loop.
    With a GPU pretended, Keras calls CudnnRNNV3, which fails here (no CPU kernel), and falls
    back: the profile shows both, and `cudnn_ran` says no, as it must for a GPU that failed."""
    tf = _tensorflow()
    keras = _keras3_tensorflow()
    x = tf.random.normal((8, 10, 4))
    layer = keras.layers.LSTM(16)
    layer(x)
    plain = tf_executed_ops(tf, lambda: layer(x))
    assert generic_ran(plain), sorted(set(plain))
    with _pretend_tf_gpu():
        attempted = tf_executed_ops(tf, lambda: layer(x))
        assert "CudnnRNNV3" in attempted and not cudnn_ran(attempted), sorted(set(attempted))
        # Compiled with the GPU pretended, the graph holds CudnnRNNV3, and running it fails on
        # a CPU: a compiled call that returns has run the op on a GPU.
        with pytest.raises(tf.errors.OpError, match="CudnnRNNV3"):
            tf.function(layer)(x)
    compiled = tf.function(layer)
    assert generic_ran(tf_executed_ops(tf, lambda: compiled(x)))  # graph ops are seen too


@cpu_only
def test_tf_mask_twin_keras_attempts_cudnn_only_for_the_right_padded_batch():
    tf = _tensorflow()
    keras = _keras3_tensorflow()
    model = _masked_lstm(keras)
    post, pre = _paddings(keras)
    model(post)
    with _pretend_tf_gpu():
        post_ops = tf_executed_ops(tf, lambda: model(post))
        pre_ops = tf_executed_ops(tf, lambda: model(pre))
    assert "CudnnRNNV3" in post_ops, sorted(set(post_ops))
    assert generic_ran(pre_ops), sorted(set(pre_ops))


# ----------------------------------------------------------------- tf-keras
@gpu_test
@pytest.mark.parametrize("kwargs, runtime", [({}, 2), ({"recurrent_dropout": 0.2}, 0)])
def test_tf_keras_runtime_and_warning(kwargs, runtime):
    """tf-keras's runtime flag (2: cuDNN ran; 0: the layer cannot use it) and its warning."""
    tf = _tensorflow_gpu()
    tf_keras = pytest.importorskip("tf_keras", reason="needs tf-keras")
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    tf.get_logger().addHandler(handler)
    try:
        layer = tf_keras.layers.LSTM(16, return_runtime=True, **kwargs)
    finally:
        tf.get_logger().removeHandler(handler)
    warned = any("will not use cuDNN" in r.getMessage() for r in records)
    assert warned is (runtime != 2)
    assert (cudnn_check.check_layer(layer) == []) is (runtime == 2)
    _, got = tf.function(layer)(tf.random.normal((8, 10, 4)))
    assert int(np.asarray(got)) == runtime


# ----------------------------------------------------------------- PyTorch
def torch_run(torch, module, x) -> tuple[set[str], list[str]]:
    """The ops PyTorch's profiler saw while module(x) ran on the GPU, and the warnings it
    raised (every one, even if raised before)."""
    from torch.profiler import ProfilerActivity, profile
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            module(x)
            torch.cuda.synchronize()
    return {e.key for e in prof.key_averages()}, [str(w.message) for w in caught]


@gpu_test
def test_check_module_on_gpu_and_flat_weights():
    """On CUDA an nn.LSTM runs cuDNN (aten::_cudnn_rnn) without a warning; a weight swapped for
    a copy outside the flat buffer is reported as a cost (verdict: cuDNN runs), and PyTorch warns
    on the call and still runs cuDNN; flatten_parameters() makes both go away."""
    torch = _torch_gpu()
    lstm = torch.nn.LSTM(8, 16, num_layers=2).cuda()
    x = torch.randn(10, 4, 8, device="cuda")

    def contiguous_warnings(ops_and_warnings):
        ops, caught = ops_and_warnings
        assert CUDNN_TORCH_OP in ops, sorted(o for o in ops if "rnn" in o or "lstm" in o)
        return [w for w in caught if w.startswith(CONTIGUOUS)]

    assert cudnn_check.check_module(lstm) == []
    assert contiguous_warnings(torch_run(torch, lstm, x)) == []
    with torch.no_grad():
        lstm.weight_hh_l0 = torch.nn.Parameter(lstm.weight_hh_l0.clone())
    found = cudnn_check.check_module(lstm)
    assert [f.criterion for f in found] == ["weights_not_flat"]
    # cuDNN ran (contiguous_warnings asserts aten::_cudnn_rnn): a cost, not a fallback
    assert contiguous_warnings(torch_run(torch, lstm, x)), "PyTorch did not warn"
    assert cudnn_check.verdict(found) == "runs cuDNN, with a cost"
    lstm.flatten_parameters()
    assert cudnn_check.check_module(lstm) == []
    assert contiguous_warnings(torch_run(torch, lstm, x)) == []


@gpu_test
def test_check_module_sees_cudnn_switched_off_inside_forward():
    """torch.backends.cudnn.flags(enabled=False) inside forward: PyTorch runs its own kernel
    (no aten::_cudnn_rnn), and the checker, given the batch, says so (#60)."""
    torch = _torch_gpu()

    class Off(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(8, 16).cuda()

        def forward(self, x):
            with torch.backends.cudnn.flags(enabled=False):
                return self.lstm(x)[0]
    module, x = Off(), torch.randn(10, 4, 8, device="cuda")
    ops, _ = torch_run(torch, module, x)
    assert CUDNN_TORCH_OP not in ops, sorted(o for o in ops if "rnn" in o or "lstm" in o)
    found = cudnn_check.check_module(module, sample=x)
    assert [f.criterion for f in found] == ["cudnn_disabled"], [str(f) for f in found]
    assert cudnn_check.verdict(found) == "does not run cuDNN"


# ----------------------------------------------------------------- Keras 3 snippets
@gpu_test
@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_keras3_backend_snippet_on_gpu(backend):
    """The criteria page's GPU snippet for this backend passes its own assertions; on a GPU
    machine its "needs a GPU" (exit 77) is a failure."""
    module = "torch" if backend == "torch" else "jax"
    pytest.importorskip(module, reason=f"needs {'PyTorch' if module == 'torch' else 'JAX'}")
    pytest.importorskip("keras", reason="needs Keras 3")
    snippet = REPO / "snippets" / "criteria" / f"{backend}_backend" / "on_gpu.py"
    proc = subprocess.run([sys.executable, str(snippet)], capture_output=True, text=True,
                          timeout=600, cwd=snippet.parent)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
