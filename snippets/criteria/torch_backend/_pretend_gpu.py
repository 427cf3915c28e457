"""Keras 3's own kernel choice on the PyTorch backend, on any machine.

Keras's PyTorch backend takes its cuDNN path when `torch.cuda.is_available()` and cuDNN are
there (`_is_cuda_cudnn_available`) and the input tensor is on a CUDA device. Inside
`pretend_gpu()`, the functions that call PyTorch's fused cuDNN op (`_cudnn_lstm`, `_cudnn_gru`,
and the weight packing of the fused Bidirectional path) note each call that reaches them.
Every decision before that (the layer's `inner_loop`, the backend's `cudnn_ok`, `lstm`, `gru`,
`bidirectional_lstm`, `bidirectional_gru`, its checks for `torch.jit` tracing and
`torch.compile`) is Keras's unchanged code.
- Without a GPU, Keras is told that CUDA and cuDNN are there, `cuda_looking(x)` gives a CPU
  tensor whose `.device` reads `cuda:0`, and a noted call then raises the error Keras catches
  when cuDNN fails, so Keras falls back to its own loop. This shows which path Keras *chooses*;
  it does not run cuDNN.
- With a GPU (Keras's own `_is_cuda_cudnn_available()` says so), nothing is pretended:
  `cuda_looking(x)` puts `x` on the GPU, the noted calls go on, and cuDNN runs.
"""
import contextlib
import importlib
import os

os.environ["KERAS_BACKEND"] = "torch"  # before Keras is imported
import keras
import torch

assert keras.backend.backend() == "torch", "KERAS_BACKEND was set to another backend first"
torch_backend_rnn = importlib.import_module("keras.src.backend.torch.rnn")
ON_GPU = torch_backend_rnn._is_cuda_cudnn_available()


class CudaLooking(torch.Tensor):
    """A CPU tensor that answers `cuda:0` when asked for its device (and nothing else)."""

    @property
    def device(self):
        return torch.device("cuda", 0)


def cuda_looking(x) -> torch.Tensor:
    if ON_GPU:
        return torch.as_tensor(x, device="cuda")
    return torch.as_tensor(x).as_subclass(CudaLooking)


@contextlib.contextmanager
def pretend_gpu():
    calls = []
    names = ("_is_cuda_cudnn_available", "_cudnn_lstm", "_cudnn_gru",
             "prepare_lstm_params", "prepare_gru_params")
    saved = {n: getattr(torch_backend_rnn, n) for n in names}
    inside = []  # on a GPU, _cudnn_lstm packs its weights too: that is not a fused call
    packed = {}  # on a GPU, a fused call packs the forward weights, then the backward ones

    def noted(kind, name, error):
        def call(*args, **kwargs):
            fused = name.startswith("prepare")
            if not ON_GPU:
                calls.append(kind)
                raise error("pretend_gpu: no GPU on this machine")
            if fused and not inside:
                packed[kind] = packed.get(kind, 0) + 1
                if packed[kind] % 2:
                    calls.append(kind)
                return saved[name](*args, **kwargs)
            inside.append(kind)
            try:
                out = saved[name](*args, **kwargs)
            finally:
                inside.pop()
            if not fused:
                calls.append(kind)
            return out
        return call

    torch_backend_rnn._is_cuda_cudnn_available = lambda: True
    torch_backend_rnn._cudnn_lstm = noted("lstm", "_cudnn_lstm", RuntimeError)
    torch_backend_rnn._cudnn_gru = noted("gru", "_cudnn_gru", RuntimeError)
    # Outside _cudnn_*, reached only by the fused Bidirectional path, which Keras leaves on
    # NotImplementedError.
    torch_backend_rnn.prepare_lstm_params = noted("bidirectional lstm", "prepare_lstm_params",
                                                  NotImplementedError)
    torch_backend_rnn.prepare_gru_params = noted("bidirectional gru", "prepare_gru_params",
                                                 NotImplementedError)
    try:
        yield calls
    finally:
        for n, f in saved.items():
            setattr(torch_backend_rnn, n, f)


def takes_cudnn(layer, x, **call_kwargs) -> bool:
    """Does `layer(x)` call cuDNN on a GPU (Keras 3, PyTorch backend)?"""
    with pretend_gpu() as calls:
        layer(cuda_looking(x), **call_kwargs)
    return bool(calls)
