"""Files of a small LSTM model moved between tf-keras (Keras 2) and Keras 3, both ways: whole
models (H5, SavedModel, .keras) and weights only, into the same layers and into RNN(LSTMCell).
Each line says what the loading package did: the same outputs, other outputs, or its error."""
# snippet: timeout=240
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import logging
import warnings

warnings.filterwarnings("ignore")  # Keras 3 warns that H5 is a legacy format
logging.getLogger("tensorflow").setLevel(logging.ERROR)
logging.getLogger("absl").setLevel(logging.ERROR)
import numpy as np

x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")


def attempt(what, load):
    """Load, then compare with the saved model's outputs; or print the loader's error."""
    try:
        print(f"{what}: {load()}")
    except Exception as e:  # the loader's own error is the answer
        text = " ".join(str(e).split())
        print(f"{what}: {type(e).__name__}: {text[:200]}{'…' if len(text) > 200 else ''}")


# --8<-- [start:show]
import keras  # Keras 3
import tf_keras  # Keras 2


def k2_model():
    L = tf_keras.layers
    return tf_keras.Sequential([L.Input((5, 3)), L.LSTM(4, name="lstm"), L.Dense(1, name="out")])


def k3_model(rnn=None):
    L = keras.layers
    return keras.Sequential([L.Input((5, 3)), rnn or L.LSTM(4, name="lstm"),
                             L.Dense(1, name="out")])


def same_as(saved):
    expected = saved.predict(x, verbose=0)
    return lambda m: ("same outputs" if np.allclose(m.predict(x, verbose=0), expected, atol=1e-6)
                      else "OTHER outputs")


def weights_into(model, path, check):
    model.load_weights(path)
    return check(model)


print("tf-keras -> Keras 3")
k2 = k2_model()
k2.save("k2_model.h5")
k2.save("k2_savedmodel")
k2.save_weights("k2.h5")
check = same_as(k2)
attempt("  save('.h5'), keras.models.load_model",
        lambda: check(keras.models.load_model("k2_model.h5")))
attempt("  SavedModel folder, keras.models.load_model",
        lambda: check(keras.models.load_model("k2_savedmodel")))
attempt("  save_weights('.h5'), load_weights into LSTM",
        lambda: weights_into(k3_model(), "k2.h5", check))
attempt("  save_weights('.h5'), load_weights into RNN(LSTMCell)",
        lambda: weights_into(k3_model(keras.layers.RNN(keras.layers.LSTMCell(4), name="lstm")),
                             "k2.h5", check))

print("Keras 3 -> tf-keras")
k3 = k3_model()
k3.save("k3.keras")
k3.save("k3_model.h5")
k3.save_weights("k3.weights.h5")
check = same_as(k3)
attempt("  save('.keras'), tf_keras.models.load_model",
        lambda: check(tf_keras.models.load_model("k3.keras")))
attempt("  save('.h5'), tf_keras.models.load_model",
        lambda: check(tf_keras.models.load_model("k3_model.h5")))
attempt("  save_weights('.weights.h5'), load_weights into LSTM",
        lambda: weights_into(k2_model(), "k3.weights.h5", check))
attempt("  save('.h5'), load_weights into LSTM",
        lambda: weights_into(k2_model(), "k3_model.h5", check))
# --8<-- [end:show]
