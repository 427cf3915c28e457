"""Keras 3 on the TensorFlow backend: LSTM and GRU with use_cudnn="auto" (cuDNN) vs
use_cudnn=False (the generic loop), on the same GPU. The model and timing are in _speedup.py."""
# snippet: timeout=1800 needs=gpu exclusive
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # this program measures one backend
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

import _speedup  # the shared half of the benchmark, next to this file

on_gpu = _speedup.use_gpu(bool(tf.config.list_physical_devices("GPU")), "TensorFlow sees no GPU")
tf.config.experimental.enable_tensor_float_32_execution(False)  # FP32 on both paths


# --8<-- [start:show]
def cudnn_ops(layer):
    """The cuDNN ops in the graph TensorFlow traces for a model holding this layer."""
    model = keras.Sequential([keras.Input((8, 16)), layer])
    fn = tf.function(lambda v: model(v, training=False))
    graph = fn.get_concrete_function(tf.zeros((2, 8, 16))).graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    return sorted({n.op for n in nodes if n.op.startswith("CudnnRNN")})


for layer in ("LSTM", "GRU"):  # before timing anything: each path runs the kernel it claims
    auto = cudnn_ops(getattr(keras.layers, layer)(16, use_cudnn="auto"))
    off = cudnn_ops(getattr(keras.layers, layer)(16, use_cudnn=False))
    print(f"kernel check: {layer} use_cudnn='auto': {auto}; use_cudnn=False: {off}")
    assert bool(auto) == on_gpu and not off, (layer, auto, off)
# --8<-- [end:show]

_speedup.run("Keras 3 (TensorFlow)", _speedup.keras3_paths(keras, jit_compile=False),
             _speedup.no_sync, _speedup.keras_matmul(keras),
             notes={"keras": keras.__version__, "tensorflow": tf.__version__})
