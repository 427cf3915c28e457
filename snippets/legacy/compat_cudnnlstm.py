"""tf.compat.v1.keras.layers.CuDNNLSTM still exists in tf-keras: what it needs and what it costs."""
# snippet: timeout=180
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # Keras 2: must be set before TensorFlow is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# --8<-- [start:show]
import numpy as np
import tensorflow as tf

L1 = tf.compat.v1.keras.layers  # tf-keras's TF 1 API: the only place CuDNNLSTM is left
x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")
shapes = {}
for layer in (L1.CuDNNLSTM(4), L1.CuDNNGRU(4)):
    layer.build(x.shape)
    shapes[type(layer).__name__] = [tuple(w.shape) for w in layer.weights]
    print(f"{type(layer).__name__}(4) weights:", shapes[type(layer).__name__])

# 1. It has no CPU kernel: without a GPU, calling it fails.
gpus = tf.config.list_logical_devices("GPU")
try:
    print("ran on the GPU, output shape", L1.CuDNNLSTM(4)(x).shape)
    ran = True
except tf.errors.NotFoundError as err:
    lines = err.message.splitlines()
    print(f"GPUs: {len(gpus)}.", *[s.split(" = ")[0] for s in lines if "Could not find" in s])
    print("\n".join(s for s in lines if s.startswith("  device=")))
    ran = False

# 2. It takes no mask.
try:
    L1.CuDNNLSTM(4)(x, mask=np.ones((2, 5), bool))
except ValueError as err:
    mask_error = str(err)
    print("with a mask:", *[s for s in mask_error.splitlines() if "Masking" in s])

# 3. Keras 3 cannot load a model that contains one.
tf.keras.Sequential([tf.keras.Input((5, 3)), L1.CuDNNLSTM(4)]).save("cudnn_lstm_model.h5")
import keras  # Keras 3: the keras package, not tf.keras

try:
    keras.saving.load_model("cudnn_lstm_model.h5")
except ValueError as err:
    load_error = str(err)
    print(f"Keras {keras.__version__} loading it:", load_error.split(". ")[0] + ".")

# 4. It does not need eager mode: with eager execution off it still builds the cuDNN op.
tf.compat.v1.disable_eager_execution()
L1.CuDNNLSTM(4)(tf.compat.v1.placeholder(tf.float32, (None, 5, 3)))
graph_ops = {op.type for op in tf.compat.v1.get_default_graph().get_operations()}
print("eager execution off; the graph holds CudnnRNNV3:", "CudnnRNNV3" in graph_ops)
# --8<-- [end:show]
# kernel, recurrent kernel, and two bias vectors per gate: 8 x units (LSTM), 6 x units (GRU)
assert shapes == {"CuDNNLSTM": [(3, 16), (4, 16), (32,)], "CuDNNGRU": [(3, 12), (4, 12), (24,)]}
assert ran == bool(gpus), "CuDNNLSTM runs exactly when a GPU is visible"
assert "Masking is not supported for CuDNN RNNs." in mask_error
assert load_error.startswith("Unknown layer: 'CuDNNLSTM'"), load_error
assert "CudnnRNNV3" in graph_ops
