"""Keras 2: the traced graph holds a cuDNN candidate only for an eligible layer."""
# snippet: timeout=120
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # Keras 2: must be set before TensorFlow is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# --8<-- [start:show]
import tensorflow as tf

def cudnn_ops(layer):
    """cuDNN ops anywhere in the graph that tf.function traces for this layer."""
    graph = tf.function(layer).get_concrete_function(tf.zeros((2, 5, 3))).graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    return sorted({n.op for n in nodes if n.op.startswith("Cudnn")})

L = tf.keras.layers
for label, layer in [("LSTM(4)", L.LSTM(4)), ("LSTM(4, recurrent_dropout=0.2)",
                     L.LSTM(4, recurrent_dropout=0.2)), ("GRU(4)", L.GRU(4)),
                     ("GRU(4, reset_after=False)", L.GRU(4, reset_after=False))]:
    ops = cudnn_ops(layer)
    print(f"{label:31} _could_use_gpu_kernel={layer._could_use_gpu_kernel!s:5} graph: {ops}")
    assert bool(ops) == layer._could_use_gpu_kernel
# --8<-- [end:show]
