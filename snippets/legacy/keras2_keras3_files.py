"""Files of small LSTM models moved between tf-keras (Keras 2) and Keras 3, both ways: whole
models (H5, SavedModel, .keras) and weights only; into the same layers, into RNN(LSTMCell), a
subclassed layer, and a stateful model. Each line says what the loading package did: the same
outputs, other outputs, or its error."""
# snippet: timeout=240
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import logging
import warnings

warnings.filterwarnings("ignore")  # Keras 3 warns that H5 is a legacy format
logging.getLogger("tensorflow").setLevel(logging.ERROR)
logging.getLogger("absl").setLevel(logging.ERROR)
import numpy as np
import keras  # Keras 3
import tf_keras  # Keras 2

x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")


def attempt(what, load):
    """Run load() and print what it returned, or the loader's error."""
    try:
        print(f"{what}: {load()}")
    except Exception as e:  # the loader's own error is the answer
        text = " ".join(str(e).split())
        print(f"{what}: {type(e).__name__}: {text[:200]}{'…' if len(text) > 200 else ''}")


def model(k, rnn=None, shape=(5, 3), **kwargs):
    """LSTM(4) then Dense(1) in package k (tf_keras or keras)."""
    L = k.layers
    return k.Sequential([L.Input(**(kwargs or {"shape": shape})),
                         rnn or L.LSTM(4, name="lstm", stateful="batch_shape" in kwargs),
                         L.Dense(1, name="out")])


def encoder(k, class_name="Encoder"):
    """A subclassed layer holding an LSTM, the same code in either package."""
    class Encoder(k.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.rnn, self.out = k.layers.LSTM(4), k.layers.Dense(1)

        def call(self, x):
            return self.out(self.rnn(x))
    Encoder.__name__ = Encoder.__qualname__ = class_name
    return Encoder


def same_as(saved):
    expected = saved.predict(x, verbose=0)
    return lambda m: ("same outputs" if np.allclose(m.predict(x, verbose=0), expected, atol=1e-6)
                      else "OTHER outputs")


def weights_into(m, path, check):
    m.load_weights(path)
    return check(m)


# --8<-- [start:show]
print("tf-keras -> Keras 3")
k2 = model(tf_keras)
k2.save("k2_model.h5")
k2.save("k2_savedmodel")
k2.save_weights("k2.h5")
check = same_as(k2)
attempt("  save('.h5'), keras.models.load_model",
        lambda: check(keras.models.load_model("k2_model.h5")))
attempt("  SavedModel folder, keras.models.load_model",
        lambda: check(keras.models.load_model("k2_savedmodel")))
attempt("  save_weights('.h5'), load_weights into LSTM",
        lambda: weights_into(model(keras), "k2.h5", check))
attempt("  save_weights('.h5'), load_weights into RNN(LSTMCell)",
        lambda: weights_into(model(keras, keras.layers.RNN(keras.layers.LSTMCell(4), name="lstm")),
                             "k2.h5", check))
sub2 = tf_keras.Sequential([tf_keras.Input((5, 3)), encoder(tf_keras)(name="enc")])
sub2.save_weights("sub2.h5")
attempt("  subclassed layer, save_weights('.h5'), load_weights",
        lambda: weights_into(keras.Sequential([keras.Input((5, 3)), encoder(keras)(name="enc")]),
                             "sub2.h5", same_as(sub2)))

print("Keras 3 -> tf-keras")
k3 = model(keras)
k3.save("k3.keras")
k3.save("k3_model.h5")
k3.save_weights("k3.weights.h5")
check = same_as(k3)
attempt("  save('.keras'), tf_keras.models.load_model",
        lambda: check(tf_keras.models.load_model("k3.keras")))
attempt("  save('.h5'), tf_keras.models.load_model",
        lambda: check(tf_keras.models.load_model("k3_model.h5")))
attempt("  save_weights('.weights.h5'), load_weights into LSTM",
        lambda: weights_into(model(tf_keras), "k3.weights.h5", check))
attempt("  save('.h5'), load_weights into LSTM",
        lambda: weights_into(model(tf_keras), "k3_model.h5", check))
sub3 = keras.Sequential([keras.Input((5, 3)), encoder(keras)(name="enc")])
sub3.save_weights("sub3.weights.h5")
sub3.save("sub3_model.h5")
check = same_as(sub3)
sub_k2 = lambda name="Encoder": tf_keras.Sequential([tf_keras.Input((5, 3)),
                                                    encoder(tf_keras, name)(name="enc")])
attempt("  subclassed layer, save_weights('.weights.h5'), load_weights",
        lambda: weights_into(sub_k2(), "sub3.weights.h5", check))
attempt("  the same, its class renamed MyEncoder",
        lambda: weights_into(sub_k2("MyEncoder"), "sub3.weights.h5", check))
attempt("  subclassed layer, save('.h5'), load_weights",
        lambda: weights_into(sub_k2(), "sub3_model.h5", check))

print("A stateful model, tf-keras -> Keras 3")
s2 = model(tf_keras, batch_shape=(2, 5, 3))
s2.predict(x, verbose=0)  # its states are no longer zeros
s2.save_weights("stateful.h5")
s3 = model(keras, batch_shape=(2, 5, 3))
s3.load_weights("stateful.h5")
states = lambda m: [float(np.abs(np.asarray(s)).sum()) > 0 for s in m.layers[0].states]
print(f"  non-zero states: tf-keras {states(s2)}, Keras 3 after load_weights {states(s3)}")
attempt("  Keras 3 reset_states(states=...)",
        lambda: s3.layers[0].reset_states(states=[np.zeros((2, 4))] * 2))
# --8<-- [end:show]
