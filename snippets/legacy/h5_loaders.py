"""Which loaders convert CuDNNLSTM / CuDNNGRU weights: tf-keras's H5 loader does, Keras 3's
does not. Reading the arrays with h5py and converting them works with any Keras."""
# snippet: timeout=240
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # tf.keras is Keras 2 (tf-keras) in this file
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(1)
x = rng.normal(size=(3, 7, 5)).astype("float32")


def cudnn_file(layer_class, path, units=4):
    """Save H5 files the way Keras 2 saved a CuDNNLSTM / CuDNNGRU model: weights only (path)
    and the whole model (path with "_model"). Random weights, fixed seed."""
    model = tf.keras.Sequential([tf.keras.Input(x.shape[1:]), layer_class(units, name="rnn")])
    model.set_weights([rng.normal(scale=0.5, size=w.shape).astype("float32")
                       for w in model.get_weights()])
    model.save_weights(path)
    model.save(path.replace(".h5", "_model.h5"))
    return model.get_weights()


L1 = tf.compat.v1.keras.layers
lstm_cudnn = cudnn_file(L1.CuDNNLSTM, "old_cudnn_lstm.h5")
gru_cudnn = cudnn_file(L1.CuDNNGRU, "old_cudnn_gru.h5")

# --8<-- [start:show]
import keras  # Keras 3 (the keras package); tf.keras is tf-keras here

from cudnn_weights import gru_from_cudnn, lstm_from_cudnn, read_h5_weights  # the file above

cases = [("LSTM", "old_cudnn_lstm.h5", lstm_from_cudnn, {}),
         ("GRU", "old_cudnn_gru.h5", gru_from_cudnn, {"reset_after": True})]
for name, path, convert, kwargs in cases:
    cudnn = read_h5_weights(path, "rnn")
    print(f"{path}: {[a.shape for a in cudnn]}")

    # tf-keras (Keras 2): load_weights converts CuDNN weights by itself.
    k2 = tf.keras.Sequential([tf.keras.Input(x.shape[1:]),
                              getattr(tf.keras.layers, name)(4, name="rnn", **kwargs)])
    k2.load_weights(path)
    for ours, theirs in zip(convert(*cudnn), k2.get_weights()):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)
    print(f"  tf-keras {name}.load_weights: converted, same arrays as {convert.__name__}")

    # Keras 3: load_weights does not convert; the shapes do not match.
    k3 = keras.Sequential([keras.Input(x.shape[1:]), getattr(keras.layers, name)(4, name="rnn")],
                          name="model")
    try:
        k3.load_weights(path)
        raise AssertionError(f"Keras {keras.__version__} loaded CuDNN weights: update this page")
    except ValueError as err:
        print(f"  Keras {keras.__version__} {name}.load_weights: ValueError: {err}")

    # Keras 3 with the arrays read and converted: same outputs as tf-keras's conversion.
    k3.set_weights(convert(*cudnn))
    diff = np.abs(keras.ops.convert_to_numpy(k3(x)) - k2(x).numpy()).max()
    print(f"  Keras 3 {name} with {convert.__name__}: max |Keras 3 - tf-keras| = {diff:.1e}")
    assert diff < 1e-5, diff

# GRU(reset_after=False) cannot take CuDNNGRU weights: its equations differ.
try:
    tf.keras.Sequential([tf.keras.Input(x.shape[1:]),
                         tf.keras.layers.GRU(4, reset_after=False, name="rnn")]
                        ).load_weights("old_cudnn_gru.h5")
except ValueError as err:
    print("tf-keras GRU(reset_after=False).load_weights: ValueError:", err)
# --8<-- [end:show]
# read_h5_weights returns what was saved, from a weights file and from a whole-model file.
for stored, path in [(lstm_cudnn, "old_cudnn_lstm.h5"), (gru_cudnn, "old_cudnn_gru.h5")]:
    for file in (path, path.replace(".h5", "_model.h5")):
        read = read_h5_weights(file, "rnn")
        assert len(read) == 3 and all(np.array_equal(a, b) for a, b in zip(stored, read)), file
