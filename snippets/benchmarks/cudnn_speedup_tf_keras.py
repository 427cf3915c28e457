"""tf-keras (Keras 2): an LSTM or GRU that meets cuDNN's criteria vs the same layer made
ineligible by a neutral argument, on the same GPU. The argument is activation=lambda v:
tf.tanh(v): the same tanh, but not the function the criteria name, so tf-keras takes its
generic kernel. Same weights and data; timing in _speedup.py."""
# snippet: timeout=1800 needs=gpu exclusive
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import tf_keras

import _speedup  # the shared half of the benchmark, next to this file

on_gpu = _speedup.use_gpu(bool(tf.config.list_physical_devices("GPU")), "TensorFlow sees no GPU")
tf.config.experimental.enable_tensor_float_32_execution(False)  # FP32 on both paths
NEUTRAL = {"activation": lambda v: tf.tanh(v)}  # same numbers, not eligible for cuDNN


# --8<-- [start:show]
# --8<-- [start:compare]
def paths(layer, mode, size):
    units, steps, batch = size["units"], size["steps"], size["batch"]
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(batch, steps, units)).astype("float32"))
    y = tf.zeros((batch, units))
    models = []
    for kwargs in ({}, NEUTRAL):
        tf_keras.utils.set_random_seed(0)
        model = tf_keras.Sequential([tf_keras.Input((steps, units)),
                                     getattr(tf_keras.layers, layer)(units, **kwargs)])
        model.compile(optimizer=tf_keras.optimizers.SGD(1e-3), loss="mse", jit_compile=False)
        models.append(model)
    models[1].set_weights(models[0].get_weights())
    if mode == "train":
        return tuple(lambda m=m: m.train_on_batch(x, y) for m in models)
    return tuple(lambda m=m: m.predict_on_batch(x) for m in models)
# --8<-- [end:compare]


def cudnn_ops(layer):
    """The cuDNN ops in the graph of a model holding this layer. tf-keras puts the cuDNN and
    the generic function in the graph of an eligible layer; Grappler picks one at run time."""
    model = tf_keras.Sequential([tf_keras.Input((8, 16)), layer])
    fn = tf.function(lambda v: model(v, training=False))
    graph = fn.get_concrete_function(tf.zeros((2, 8, 16))).graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    return sorted({n.op for n in nodes if n.op.startswith("CudnnRNN")})


for layer in ("LSTM", "GRU"):  # before timing anything: each path runs the kernel it claims
    eligible = cudnn_ops(getattr(tf_keras.layers, layer)(16))
    neutral = cudnn_ops(getattr(tf_keras.layers, layer)(16, **NEUTRAL))
    # Which implementation ran (tf-keras's test flag): 2 = cuDNN on the GPU, 1 = the CPU's.
    _, runtime = getattr(tf_keras.layers, layer)(16, return_runtime=True)(tf.zeros((2, 8, 16)))
    print(f"kernel check: {layer} eligible: {eligible}, ran implementation {int(runtime)}; "
          f"with the neutral argument: {neutral}")
    assert eligible and not neutral and int(runtime) == (2 if on_gpu else 1), layer
# --8<-- [end:show]


def matmul(n):
    a = tf.random.normal((n, n), seed=0)
    return lambda: float(tf.reduce_sum(tf.matmul(a, a)))


_speedup.run("tf-keras", paths, _speedup.no_sync, matmul,
             notes={"tf_keras": tf_keras.__version__, "tensorflow": tf.__version__})
