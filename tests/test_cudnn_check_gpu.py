"""GPU only (`pytest -m gpu`): cuDNN really runs for eligible layers and not for others."""
from __future__ import annotations

import logging
import os
import sys

import numpy as np
import pytest

from conftest import REPO

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

sys.path.insert(0, str(REPO / "snippets"))
import cudnn_check  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(
    not tf.config.list_logical_devices("GPU"), reason="needs a GPU")]


def cudnn_ops(layer, x):
    graph = tf.function(layer).get_concrete_function(x).graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    return {n.op for n in nodes if n.op.startswith("Cudnn")}


@pytest.mark.parametrize("kwargs, eligible", [({}, True), ({"recurrent_dropout": 0.2}, False),
                                              ({"unroll": True}, False)])
def test_keras3_runs_cudnn_op_exactly_when_checker_says(kwargs, eligible):
    import keras
    x = tf.random.normal((8, 10, 4))
    layer = keras.layers.LSTM(16, **kwargs)
    ops = cudnn_ops(layer, x)
    assert bool({"CudnnRNN", "CudnnRNNV2", "CudnnRNNV3"} & ops) is eligible, ops
    assert (cudnn_check.check_layer(layer) == []) is eligible
    layer(x)  # and it really runs on the GPU


@pytest.mark.parametrize("kwargs, runtime", [({}, 2), ({"recurrent_dropout": 0.2}, 0)])
def test_tf_keras_runtime_and_warning(kwargs, runtime):
    import tf_keras
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
    if runtime == 2:
        _, got = tf.function(layer)(tf.random.normal((8, 10, 4)))
        assert int(np.asarray(got)) == 2  # 2 = the GPU (cuDNN) implementation ran
