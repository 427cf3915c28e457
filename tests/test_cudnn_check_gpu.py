"""GPU only (`pytest -m gpu`): the checker's verdicts are what really runs on a GPU.

Each test needs its framework; where a framework is missing (a GPU machine with PyTorch and JAX
but no TensorFlow is common) its tests are skipped and say which framework they need."""
from __future__ import annotations

import logging
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(REPO / "snippets"))
import cudnn_check  # noqa: E402

pytestmark = pytest.mark.gpu


def _tensorflow_gpu():
    tf = pytest.importorskip("tensorflow", reason="needs TensorFlow")
    if not tf.config.list_logical_devices("GPU"):
        pytest.skip("needs a GPU visible to TensorFlow")
    return tf


def _torch_gpu():
    torch = pytest.importorskip("torch", reason="needs PyTorch")
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU visible to PyTorch")
    return torch


def _tf_cudnn_ops(tf, layer, x):
    graph = tf.function(layer).get_concrete_function(x).graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    return {n.op for n in nodes if n.op.startswith("Cudnn")}


@pytest.mark.parametrize("kwargs, eligible", [({}, True), ({"recurrent_dropout": 0.2}, False),
                                              ({"unroll": True}, False)])
def test_keras3_tensorflow_runs_cudnn_op_exactly_when_checker_says(kwargs, eligible):
    tf = _tensorflow_gpu()
    import keras
    if keras.backend.backend() != "tensorflow":
        pytest.skip("this process runs Keras on another backend")
    x = tf.random.normal((8, 10, 4))
    layer = keras.layers.LSTM(16, **kwargs)
    ops = _tf_cudnn_ops(tf, layer, x)
    assert bool({"CudnnRNN", "CudnnRNNV2", "CudnnRNNV3"} & ops) is eligible, ops
    assert (cudnn_check.check_layer(layer) == []) is eligible
    layer(x)  # and it really runs on the GPU


@pytest.mark.parametrize("kwargs, runtime", [({}, 2), ({"recurrent_dropout": 0.2}, 0)])
def test_tf_keras_runtime_and_warning(kwargs, runtime):
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
    if runtime == 2:
        _, got = tf.function(layer)(tf.random.normal((8, 10, 4)))
        assert int(np.asarray(got)) == 2  # 2 = the GPU (cuDNN) implementation ran


def test_check_module_on_gpu_and_flat_weights():
    """On CUDA an nn.LSTM passes; a weight swapped for a copy outside the flat buffer is
    reported, and flatten_parameters() makes the finding go away."""
    torch = _torch_gpu()
    lstm = torch.nn.LSTM(8, 16, num_layers=2).cuda()
    assert cudnn_check.check_module(lstm) == []
    with torch.no_grad():
        lstm.weight_hh_l0 = torch.nn.Parameter(lstm.weight_hh_l0.clone())
    assert [f.criterion for f in cudnn_check.check_module(lstm)] == ["weights_not_flat"]
    lstm.flatten_parameters()
    assert cudnn_check.check_module(lstm) == []


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_keras3_backend_snippet_on_gpu(backend):
    """The criteria page's GPU snippet for this backend passes its own assertions."""
    module = "torch" if backend == "torch" else "jax"
    pytest.importorskip(module, reason=f"needs {'PyTorch' if module == 'torch' else 'JAX'}")
    pytest.importorskip("keras", reason="needs Keras 3")
    snippet = REPO / "snippets" / "criteria" / f"{backend}_backend" / "on_gpu.py"
    proc = subprocess.run([sys.executable, str(snippet)], capture_output=True, text=True,
                          timeout=600, cwd=snippet.parent)
    if proc.returncode == 77:
        pytest.skip(proc.stdout.strip() or "needs a GPU")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
