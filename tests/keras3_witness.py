"""Keras 3's own choice of kernel, witnessed below the functions the checker's probe patches.

The checker's probe (snippets/cudnn_check.py) and the criteria pages' helpers
(snippets/criteria/*/_pretend_gpu.py) replace Keras's private functions (`_is_gpu_available`,
`_cudnn_lstm`, ...) and re-run its mask check. The witness touches none of Keras's code: it
pretends a GPU one level lower, in the framework, lets every line of Keras run, and watches the
framework call that runs cuDNN on a GPU. So a wrong idea of where Keras decides, shared by the
probe and the helpers, shows up as a disagreement with this witness.

- TensorFlow: `tf.config.list_logical_devices("GPU")` lists one; the witness counts the calls of
  TensorFlow's cuDNN RNN ops, `tf.raw_ops.CudnnRNNV3` (and CudnnRNN, CudnnRNNV2: every mode, one
  call per direction), which Keras makes after its own mask check. The op then runs and fails
  on a CPU (it has no CPU kernel), as cuDNN fails without a GPU, and Keras falls back.
- JAX: `jax.default_backend()` says "gpu"; the witness traces the call with `jax.make_jaxpr` and
  counts `rnn_fwd`, the primitive jax.experimental.rnn lowers to cuDNN's RNN (two directions when
  bidirectional=True). Tracing asks the CUDA plugin for a buffer size; without the plugin a
  stand-in answers 0. Nothing is run.
- PyTorch: `torch.cuda.is_available()` and `torch.backends.cudnn.is_available()` answer yes, the
  input is a CPU tensor whose `.device` reads `cuda:0`, and a TorchFunctionMode keeps Keras's
  moves to "cuda" on the CPU; the witness counts the calls of `torch._VF.lstm`/`gru` (and
  `rnn_tanh`/`rnn_relu`), PyTorch's fused RNN (cuDNN on a GPU; Keras's own fallback never calls
  it). They run, on the CPU.

`cudnn_directions(call, x)` runs `call` on `x` (converted for the backend Keras runs on) and
returns how many RNN directions reached that call.
"""
from __future__ import annotations

import contextlib
import re


@contextlib.contextmanager
def gpu_listed(config):
    """tf.config (the module object given) lists a GPU; every other question goes through."""
    real = config.list_logical_devices

    def listing(device_type=None):
        return ["pretended GPU"] if device_type == "GPU" else real(device_type)
    config.list_logical_devices = listing
    try:
        yield
    finally:
        config.list_logical_devices = real


def _tensorflow(call, x) -> int:
    import tensorflow as tf
    calls = []
    ops = ("CudnnRNN", "CudnnRNNV2", "CudnnRNNV3")  # every mode: LSTM, GRU, tanh, relu
    real = {name: getattr(tf.raw_ops, name) for name in ops}

    def counted(name):
        def op(**kwargs):
            calls.append(kwargs.get("rnn_mode", "lstm"))
            return real[name](**kwargs)  # no CPU kernel: it fails here, as cuDNN fails without
        return op                        # a GPU
    for name in ops:
        setattr(tf.raw_ops, name, counted(name))
    try:
        with gpu_listed(tf.config):
            call(x)
    finally:
        for name in ops:
            setattr(tf.raw_ops, name, real[name])
    return len(calls)


RNN_FWD = re.compile(r"\brnn_fwd\[[^\]]*?bidirectional=(True|False)")


def _jax(call, x) -> int:
    import jax
    from jax._src.lib import gpu_rnn  # the module jax.experimental.rnn reads its sizes from
    real_backend = jax.default_backend
    stand_in = not hasattr(gpu_rnn, "compute_rnn_workspace_reserve_space_sizes")
    jax.default_backend = lambda: "gpu"
    if stand_in:  # a CPU jaxlib: the buffer size only shapes the trace
        gpu_rnn.compute_rnn_workspace_reserve_space_sizes = lambda *args: (0, 0)
    import keras
    try:
        with keras.StatelessScope():  # state a layer writes while traced stays in the trace
            text = str(jax.make_jaxpr(call)(x))
    finally:
        jax.default_backend = real_backend
        if stand_in:
            del gpu_rnn.compute_rnn_workspace_reserve_space_sizes
    return sum(2 if both == "True" else 1 for both in RNN_FWD.findall(text))


def _torch(call, x) -> int:
    import torch
    from torch.overrides import TorchFunctionMode

    class CudaLooking(torch.Tensor):  # a CPU tensor that answers cuda:0 when asked its device
        @property
        def device(self):
            return torch.device("cuda", 0)

    def cuda(d) -> bool:
        return isinstance(d, (str, torch.device)) and torch.device(d).type == "cuda"

    calls = []

    class KeepOnCpu(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            name = getattr(func, "__name__", "")
            if func in (torch._VF.lstm, torch._VF.gru, torch._VF.rnn_tanh, torch._VF.rnn_relu):
                calls.append(2 if args[7] else 1)  # (input, hx, params, bias, layers,
            if name in ("to", "cuda"):             #  dropout, train, bidirectional, ...)
                args = tuple(a for a in args if not cuda(a))
                if cuda(kwargs.get("device")):
                    del kwargs["device"]
                if name == "cuda" or (len(args) == 1 and not kwargs):
                    return args[0]
            elif cuda(kwargs.get("device")):
                kwargs["device"] = "cpu"
            return func(*args, **kwargs)

    saved = torch.cuda.is_available, torch.backends.cudnn.is_available
    torch.cuda.is_available = torch.backends.cudnn.is_available = lambda: True
    inputs = [torch.as_tensor(a).as_subclass(CudaLooking) for a in x] if isinstance(x, list) \
        else torch.as_tensor(x).as_subclass(CudaLooking)
    try:
        with KeepOnCpu():
            call(inputs)
    finally:
        torch.cuda.is_available, torch.backends.cudnn.is_available = saved
    return sum(calls)


def cudnn_directions(call, x, stop=()) -> int:
    """How many RNN directions reach the framework's cuDNN call while `call(x)` runs with a
    GPU pretended in the framework. An exception of a type in `stop` ends the call and the
    directions counted until then stand; any other goes through."""
    import keras

    def guarded(a):
        try:
            call(a)
        except stop:
            pass
    return {"tensorflow": _tensorflow, "jax": _jax,
            "torch": _torch}[keras.backend.backend()](guarded, x)
