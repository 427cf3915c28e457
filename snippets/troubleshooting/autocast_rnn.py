"""PyTorch: what torch.autocast hands to cuDNN's RNN, asked of PyTorch's own autocast kernel on
tensors that say they are on the GPU (no GPU needed); and the CPU's autocast rule."""
# snippet: timeout=120
import contextlib

import torch
from torch._subclasses.fake_tensor import FakeTensorMode  # tensors that report "cuda", no GPU
from torch.utils._python_dispatch import TorchDispatchMode


@contextlib.contextmanager
def cuda_autocast(dtype):
    """The switches torch.autocast("cuda", dtype) turns on; torch.autocast itself turns itself
    off where no CUDA device is found, so on a CPU machine they are set directly."""
    was = torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda")
    torch.set_autocast_enabled("cuda", True)
    torch.set_autocast_dtype("cuda", dtype)
    try:
        yield
    finally:
        torch.set_autocast_enabled("cuda", was[0])
        torch.set_autocast_dtype("cuda", was[1])
        torch.clear_autocast_cache()


# --8<-- [start:show]
class CudnnRnnArgs(TorchDispatchMode):
    """Notes the dtypes that reach aten::_cudnn_rnn (cuDNN's RNN), after autocast."""
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten._cudnn_rnn.default:
            x, h, c = args[0], args[4], args[5]
            self.seen = {"input": x.dtype, "h0": h.dtype}
            if c is not None:
                self.seen["c0"] = c.dtype
            return (x,) * 5  # stop here: what would run next is cuDNN itself
        return func(*args, **(kwargs or {}))

def reaches_cudnn(mode, input_dtype):
    """Call cuDNN's RNN op; under CUDA autocast, PyTorch's autocast kernel casts what it gets."""
    H, I, gates = 4, 3, {"LSTM": 4, "GRU": 3}[mode]
    with FakeTensorMode():  # tensors on "cuda", with no memory behind them
        cuda = dict(device="cuda")
        # float16 weights: casting float32 weights needs a cuDNN handle, so a GPU (see below)
        w = [torch.zeros(gates * H, n, **cuda, dtype=torch.float16) for n in (I, H)]
        w += [torch.zeros(gates * H, **cuda, dtype=torch.float16) for _ in range(2)]
        x = torch.zeros(5, 2, I, **cuda, dtype=input_dtype)
        h = torch.zeros(1, 2, H, **cuda, dtype=input_dtype)
        c = torch.zeros(1, 2, H, **cuda, dtype=input_dtype) if mode == "LSTM" else None
        with CudnnRnnArgs() as seen:
            torch.ops.aten._cudnn_rnn(x, w, 4, None, h, c, {"LSTM": 2, "GRU": 3}[mode], H, 0,
                                      1, False, 0.0, False, False, [], None)
    return {k: str(v).removeprefix("torch.") for k, v in seen.seen.items()}

kernel = [line for line in torch._C._dispatch_dump("aten::_cudnn_rnn").splitlines()
          if line.startswith("AutocastCUDA:")]
print(f"PyTorch {torch.__version__}, autocast kernel of cuDNN's RNN:",
      kernel[0].split(" :: ")[0].split("/aten/src/")[-1] if kernel else "none")
cases = [(mode, autocast, torch.float32) for mode in ("LSTM", "GRU")
         for autocast in (None, torch.float16, torch.bfloat16)]
cases.append(("LSTM", torch.bfloat16, torch.bfloat16))  # a bfloat16 model under autocast
results = {}
for mode, autocast_dtype, input_dtype in cases:
    key = mode, str(autocast_dtype or "off").removeprefix("torch."), str(input_dtype)[6:]
    with cuda_autocast(autocast_dtype) if autocast_dtype else contextlib.nullcontext():
        results[key] = reaches_cudnn(mode, input_dtype)
    print(f"{mode:4} autocast {key[1]:8} input {key[2]:8} -> cuDNN gets",
          ", ".join(f"{k} {v}" for k, v in results[key].items()))

cpu = {}
for layer in (torch.nn.LSTM(3, 4), torch.nn.GRU(3, 4)):  # the CPU's own rule, on the CPU
    with torch.autocast("cpu", dtype=torch.bfloat16):
        try:
            cpu[type(layer).__name__] = str(layer(torch.zeros(5, 2, 3))[0].dtype)[6:]
        except RuntimeError as err:  # oneDNN's LSTM in bfloat16 needs a CPU that has it
            cpu[type(layer).__name__] = f"RuntimeError: {str(err)[:60]}"
print("CPU autocast bfloat16, output dtype:", ", ".join(f"{k} {v}" for k, v in cpu.items()))
# --8<-- [end:show]
assert kernel and "AutocastRNN.cpp" in kernel[0], kernel
for (mode, autocast, dtype), seen in results.items():  # off: untouched; on: float16
    assert set(seen.values()) == {"float16" if autocast != "off" else dtype}, (mode, seen)
assert cpu["GRU"] == "float32" and (cpu["LSTM"] == "bfloat16"
                                     or cpu["LSTM"].startswith("RuntimeError")), cpu
