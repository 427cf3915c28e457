"""On a GPU: an eligible LSTM runs a cuDNN op, an ineligible one does not (Keras 3)."""
# snippet: timeout=300 needs=gpu
import os
import sys

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf

if not tf.config.list_logical_devices("GPU"):
    print("needs a GPU: no GPU visible to TensorFlow, cuDNN cannot run here.")
    sys.exit(77)
# --8<-- [start:show]
import keras

def cudnn_ops(layer):
    """cuDNN ops in the graph that tf.function traces for this layer on the GPU."""
    graph = tf.function(layer).get_concrete_function(tf.zeros((8, 20, 16))).graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    return sorted({n.op for n in nodes if n.op.startswith("Cudnn")})

good = cudnn_ops(keras.layers.LSTM(32))
slow = cudnn_ops(keras.layers.LSTM(32, recurrent_dropout=0.2))
print("LSTM(32):                        ", good)
print("LSTM(32, recurrent_dropout=0.2): ", slow)
# --8<-- [end:show]
assert good and not slow, (good, slow)
