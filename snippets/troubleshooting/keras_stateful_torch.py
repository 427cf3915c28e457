"""On a GPU: a stateful Keras 3 GRU and LSTM on the PyTorch backend, through backward() and
fit(), with use_cudnn="auto" (the default: cuDNN on a GPU) and with use_cudnn=False.
keras-team/keras#23462 reports that the cuDNN path fails in backward() (Keras 3.15.1).
Run it as it is: python keras_stateful_torch.py

BENCH_CPU_DRY_RUN=1 runs the same code on the CPU to check it (the tests do); there is no cuDNN
there, so it says nothing about the GPU.
"""
# snippet: timeout=180 needs=gpu
import os
import sys

os.environ["KERAS_BACKEND"] = "torch"  # before Keras is imported
import torch

DRY_RUN = os.environ.get("BENCH_CPU_DRY_RUN") == "1"
if not torch.cuda.is_available() and not DRY_RUN:
    print("needs a GPU: PyTorch sees no CUDA device, so Keras runs no cuDNN kernel.")
    sys.exit(77)
# --8<-- [start:show]
import keras
import numpy as np
from torch.profiler import ProfilerActivity, profile

print(f"Keras {keras.__version__}, PyTorch {torch.__version__}, "
      f"device {keras.ops.zeros(1).device}")
x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype("float32")


def first_line(err):
    line = str(err).strip().splitlines()[0].split(" Hint:")[0]  # PyTorch's hint: not the news
    return f"{type(err).__name__}: {line}"


for name in ("GRU", "LSTM"):
    for use_cudnn in ("auto", False):
        layer = getattr(keras.layers, name)(5, stateful=True, use_cudnn=use_cudnn)
        model = keras.Sequential([keras.Input(batch_shape=(2, 3, 4)), layer])
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            out = model(keras.ops.convert_to_tensor(x))
        cudnn = any(e.key == "aten::_cudnn_rnn" for e in prof.key_averages())
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
        print(f"{name} stateful, use_cudnn={use_cudnn!r:6} cuDNN: {cudnn!s:5} "
              f"backward(): {backward}\n{'':41}fit(): {fit}")
# --8<-- [end:show]
