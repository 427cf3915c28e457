"""tf-keras (Keras 2): which LSTM/GRU layers the installed release would run on cuDNN."""
# snippet: timeout=240 matrix
import json
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # Keras 2: must be set before TensorFlow is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import tf_keras

L = tf_keras.layers
X = tf.constant(np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32"))
RIGHT = tf.constant([[True] * 3 + [False] * 2, [True] * 5])

# id: (what the reader would write, builder, call arguments). The same ids as the Keras 3 cases.
CASES = {
    "lstm": ("LSTM(4)", lambda: L.LSTM(4), {}),
    "gru": ("GRU(4)", lambda: L.GRU(4), {}),
    "lstm_mask_right": ("LSTM(4), right-padded mask", lambda: L.LSTM(4), {"mask": RIGHT}),
    "lstm_dropout_training": ("LSTM(4, dropout=0.5), training", lambda: L.LSTM(4, dropout=0.5),
                              {"training": True}),
    "lstm_recurrent_dropout": ("LSTM(4, recurrent_dropout=0.5), training",
                               lambda: L.LSTM(4, recurrent_dropout=0.5), {"training": True}),
    "lstm_relu": ('LSTM(4, activation="relu")', lambda: L.LSTM(4, activation="relu"), {}),
    "lstm_unroll": ("LSTM(4, unroll=True)", lambda: L.LSTM(4, unroll=True), {}),
    "lstm_no_bias": ("LSTM(4, use_bias=False)", lambda: L.LSTM(4, use_bias=False), {}),
    "gru_reset_after_false": ("GRU(4, reset_after=False)", lambda: L.GRU(4, reset_after=False),
                              {}),
    "bidirectional_lstm": ("Bidirectional(LSTM(4))", lambda: L.Bidirectional(L.LSTM(4)), {}),
}


def cudnn_ops(layer, kwargs):
    """cuDNN ops anywhere in the graph tf.function traces for this call: tf-keras puts the cuDNN
    candidate in the graph and lets TensorFlow pick it on a GPU at run time."""
    fn = tf.function(lambda x: layer(x, **kwargs))
    graph = fn.get_concrete_function(X).graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    return sorted({n.op for n in nodes if n.op.startswith("Cudnn")})


cases = {}
for case_id, (label, build, kwargs) in CASES.items():
    layer = build()
    inner = getattr(layer, "forward_layer", layer)
    ops = cudnn_ops(layer, kwargs)
    cases[case_id] = {"calls": ops, "error": None,
                      "could_use_gpu_kernel": bool(inner._could_use_gpu_kernel)}
    print(f"{label:42} _could_use_gpu_kernel={inner._could_use_gpu_kernel!s:5} graph: {ops}")

data = {"tf_keras": tf_keras.__version__, "tensorflow": tf.__version__, "backend": "tensorflow",
        "cases": cases, "labels": {k: v[0] for k, v in CASES.items()}}
print(f"tf-keras {tf_keras.__version__}, TensorFlow {tf.__version__}")
folder = os.environ.get("SNIPPET_DATA_DIR")
if folder:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "rules.json"), "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
