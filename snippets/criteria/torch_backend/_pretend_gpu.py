"""Run Keras 3's own kernel choice on the PyTorch backend on a CPU-only machine.

Keras's PyTorch backend takes its cuDNN path when `torch.cuda.is_available()` and cuDNN are
there (`_is_cuda_cudnn_available`) and the input tensor is on a CUDA device. Inside
`pretend_gpu()` the first answers yes, and `cuda_looking(x)` gives a CPU tensor whose `.device`
reads `cuda:0`. The functions that would call PyTorch's fused cuDNN op (`_cudnn_lstm`,
`_cudnn_gru`, and the weight packing of the fused Bidirectional path) are replaced by a
recorder: it notes the call, then raises the error Keras catches when cuDNN fails, so Keras
falls back to its own loop. Every decision in between (the layer's `inner_loop`, the backend's
`cudnn_ok`, `lstm`, `gru`, `bidirectional_lstm`, `bidirectional_gru`, its checks for
`torch.jit` tracing and `torch.compile`) is Keras's unchanged code.
This proves which path Keras *chooses*; it does not run cuDNN.
"""
import contextlib
import importlib
import os

os.environ["KERAS_BACKEND"] = "torch"  # before Keras is imported
import keras
import torch

assert keras.backend.backend() == "torch", "KERAS_BACKEND was set to another backend first"
torch_backend_rnn = importlib.import_module("keras.src.backend.torch.rnn")


class CudaLooking(torch.Tensor):
    """A CPU tensor that answers `cuda:0` when asked for its device (and nothing else)."""

    @property
    def device(self):
        return torch.device("cuda", 0)


def cuda_looking(x) -> torch.Tensor:
    return torch.as_tensor(x).as_subclass(CudaLooking)


@contextlib.contextmanager
def pretend_gpu():
    calls = []
    names = ("_is_cuda_cudnn_available", "_cudnn_lstm", "_cudnn_gru",
             "prepare_lstm_params", "prepare_gru_params")
    saved = {n: getattr(torch_backend_rnn, n) for n in names}

    def recorder(kind, error):
        def fake(*args, **kwargs):
            calls.append(kind)
            raise error("pretend_gpu: no cuDNN on this machine")
        return fake

    torch_backend_rnn._is_cuda_cudnn_available = lambda: True
    torch_backend_rnn._cudnn_lstm = recorder("lstm", RuntimeError)
    torch_backend_rnn._cudnn_gru = recorder("gru", RuntimeError)
    # Reached only by the fused Bidirectional path, which Keras leaves on NotImplementedError.
    torch_backend_rnn.prepare_lstm_params = recorder("bidirectional lstm", NotImplementedError)
    torch_backend_rnn.prepare_gru_params = recorder("bidirectional gru", NotImplementedError)
    try:
        yield calls
    finally:
        for n, f in saved.items():
            setattr(torch_backend_rnn, n, f)


def takes_cudnn(layer, x, **call_kwargs) -> bool:
    """Would `layer(x)` call cuDNN on a GPU (Keras 3, PyTorch backend)?"""
    with pretend_gpu() as calls:
        layer(cuda_looking(x), **call_kwargs)
    return bool(calls)
