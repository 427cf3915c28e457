"""PyTorch backend: torch.backends.cudnn.flags(enabled=False) around a Keras model. Keras still
makes its cuDNN call; PyTorch reads its switch inside that call and runs its own kernel."""
# snippet: timeout=120
import importlib
import os
import sys

os.environ["KERAS_BACKEND"] = "torch"  # Keras 3 on PyTorch; set before Keras is imported
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numpy as np
import torch

from _pretend_gpu import cuda_looking, pretend_gpu  # runs Keras's own choice without a GPU
from cudnn_check import check_model

x = np.zeros((2, 5, 3), "float32")
torch_rnn = importlib.import_module("keras.src.backend.torch.rnn")


def at_the_cudnn_call(model) -> dict:
    """Does Keras call its cuDNN LSTM (PyTorch's fused op), and is PyTorch's cuDNN switch on in
    that call? at::cudnn_is_acceptable reads the switch before anything else."""
    switch = []
    with pretend_gpu() as calls:
        pretended = torch_rnn._cudnn_lstm

        def noted(*args, **kwargs):
            switch.append(torch.backends.cudnn.enabled)
            return pretended(*args, **kwargs)
        torch_rnn._cudnn_lstm = noted  # pretend_gpu() puts the original back
        model(cuda_looking(x))
    return {"Keras calls cuDNN": bool(calls), "PyTorch's switch there": switch}


# --8<-- [start:show]
import keras

model = keras.Sequential([keras.Input((5, 3)), keras.layers.LSTM(4, name="lstm")], name="m")
print("as it is:                  ", at_the_cudnn_call(model))
with torch.backends.cudnn.flags(enabled=False):  # around the model, in your own code
    print("cudnn.flags(enabled=False):", at_the_cudnn_call(model))
    print("the checker, asked there:  ", [f.criterion for f in check_model(model, sample=x)])
# --8<-- [end:show]
assert at_the_cudnn_call(model) == {"Keras calls cuDNN": True, "PyTorch's switch there": [True]}
with torch.backends.cudnn.flags(enabled=False):
    assert at_the_cudnn_call(model) == {"Keras calls cuDNN": True,
                                        "PyTorch's switch there": [False]}
    assert [f.criterion for f in check_model(model, sample=x)] == ["cudnn_disabled"]
