"""TensorFlow backend (and tf-keras): what mixed_float16 and mixed_bfloat16 do to an LSTM."""
# snippet: timeout=180
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np

from _pretend_gpu import pretend_gpu  # runs Keras's own choice without a GPU

x = np.zeros((2, 5, 3), "float32")
# --8<-- [start:show]
import keras
import tensorflow as tf
import tf_keras
from tensorflow.python.framework import kernels  # TensorFlow's kernel registry

def keras3_path(policy):
    """The path Keras 3 chooses on a GPU, and the dtype it hands to cuDNN."""
    keras.mixed_precision.set_dtype_policy(policy)
    with pretend_gpu() as calls:
        keras.layers.LSTM(4)(x)
    return f"cuDNN, {calls.inputs[0].dtype.name}" if calls else "generic"

def tf_keras_op(policy):
    """The cuDNN op tf-keras puts in the graph, and its dtype."""
    tf_keras.mixed_precision.set_global_policy(policy)
    layer = tf_keras.layers.LSTM(4)
    graph = tf.function(layer).get_concrete_function(tf.zeros((2, 5, 3))).graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    found = {f"{n.op}, {tf.as_dtype(n.attr['T'].type).name}" for n in nodes
             if n.op == "CudnnRNNV3"}
    return ", ".join(sorted(found)) or "no cuDNN op"

results = {}
for policy in ("float32", "mixed_float16", "mixed_bfloat16"):
    results[policy] = keras3_path(policy), tf_keras_op(policy)
    print(f"{policy:15} Keras 3: {results[policy][0]:16} tf-keras: {results[policy][1]}")

gpu_dtypes = sorted(tf.as_dtype(k.constraint[0].allowed_values.list.type[0]).name
                    for k in kernels.get_registered_kernels_for_op("CudnnRNNV3").kernel
                    if k.device_type == "GPU")
print(f"TensorFlow {tf.__version__} has GPU kernels of CudnnRNNV3 for: {', '.join(gpu_dtypes)}")
# --8<-- [end:show]
assert results == {p: (f"cuDNN, {d}", f"CudnnRNNV3, {d}") for p, d in
                   [("float32", "float32"), ("mixed_float16", "float16"),
                    ("mixed_bfloat16", "bfloat16")]}, results
assert {"bfloat16", "float16", "float32"} <= set(gpu_dtypes), gpu_dtypes
