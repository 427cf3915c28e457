"""Keras 3 on the PyTorch backend, on the CPU: a stateful GRU and LSTM through backward() and
fit(), with use_cudnn="auto" (the default) and use_cudnn=False, asked of the installed release;
and which path ran: the PyTorch backend's own function for the layer (its fallback on a CPU, where
a GPU would run cuDNN), or Keras's generic loop. keras-team/keras#23462 reports the failure on
cuDNN; keras-team/keras#23464 copies the states before that path."""
# snippet: timeout=240 matrix
import importlib
import json
import os

os.environ["KERAS_BACKEND"] = "torch"  # before Keras is imported
import keras  # noqa: E402
import numpy as np  # noqa: E402

rnn = importlib.import_module("keras.src.backend.torch.rnn")
ran = []  # the backend's fallback functions that ran


def spy(name):
    original = getattr(rnn, name)

    def call(*args, **kwargs):
        ran.append(name)
        return original(*args, **kwargs)
    setattr(rnn, name, call)


for name in ("_fallback_lstm", "_fallback_gru"):
    if hasattr(rnn, name):  # the PyTorch backend's own path, where the release has it
        spy(name)
x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype("float32")


def first_line(err):
    line = str(err).strip().splitlines()[0].split(" Hint:")[0]
    return f"{type(err).__name__}: {line}"


cases, labels = {}, {}
for kind in ("GRU", "LSTM"):
    for use_cudnn in ("auto", False):
        case = f"stateful_{kind.lower()}_" + ("auto" if use_cudnn == "auto" else "use_cudnn_false")
        labels[case] = f"{kind}(5, stateful=True, use_cudnn={use_cudnn!r})"
        del ran[:]
        layer = getattr(keras.layers, kind)(5, stateful=True, use_cudnn=use_cudnn)
        model = keras.Sequential([keras.Input(batch_shape=(2, 3, 4)), layer])
        out = model(keras.ops.convert_to_tensor(x))
        path = "the backend's own function" if ran else "Keras's generic loop"
        try:
            out.sum().backward()
            backward = "ok"
        except RuntimeError as err:
            backward = first_line(err)
        model.compile(optimizer="sgd", loss="mse")
        try:
            model.fit(x, np.zeros((2, 5), "float32"), batch_size=2, epochs=2, verbose=0)
            fit = "ok"
        except RuntimeError as err:
            fit = first_line(err)
        failed = next((r for r in (backward, fit) if r != "ok"), None)
        # `raised`: what the layer raised in training; `error` stays for a layer the release
        # cannot build (as in the cases of _keras3_cases.py)
        cases[case] = {"path": path, "backward": backward, "fit": fit, "calls": [],
                       "error": None, "raised": failed}
        print(f"{labels[case]:42} {path}; backward(): {backward}; fit(): {fit}")

folder = os.environ.get("SNIPPET_DATA_DIR")
if folder:  # the version matrix's record (pipeline/records/versions.py)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "rules.json"), "w") as f:
        json.dump({"keras": keras.__version__, "backend": "torch", "cases": cases,
                   "labels": labels}, f, indent=1, sort_keys=True)
