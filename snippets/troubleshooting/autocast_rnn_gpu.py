"""On a GPU: the dtypes nn.LSTM and nn.GRU hand to cuDNN under torch.autocast, and whether a
bfloat16 module reaches cuDNN at all."""
# snippet: timeout=300 needs=gpu
import sys
import warnings

import torch

if not torch.cuda.is_available():
    print("needs a GPU: torch.cuda.is_available() is False, cuDNN cannot run here.")
    sys.exit(77)
# --8<-- [start:show]
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

class CudnnRnnArgs(TorchDispatchMode):
    """Notes the dtypes that reach aten::_cudnn_rnn (cuDNN's RNN), after autocast."""
    seen = None
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten._cudnn_rnn.default:
            self.seen = {"input": args[0].dtype, "weights": args[1][0].dtype, "h0": args[4].dtype}
        return func(*args, **(kwargs or {}))

def run(layer_class, module_dtype, autocast_dtype):
    layer = layer_class(16, 32).to("cuda", module_dtype)
    x = torch.randn(20, 8, 16, device="cuda", dtype=module_dtype)  # (time, batch, features)
    with warnings.catch_warnings(record=True) as warned, CudnnRnnArgs() as mode, \
            torch.autocast("cuda", dtype=autocast_dtype or torch.float16,
                           enabled=autocast_dtype is not None):
        warnings.simplefilter("always")
        out = layer(x)[0]
    got = (", ".join(f"{k} {str(v)[6:]}" for k, v in mode.seen.items()) if mode.seen
           else "nothing (PyTorch's own CUDA kernel)")
    return mode.seen, out.dtype, got, [str(w.message)[:70] for w in warned]

results = {}
for layer_class in (nn.LSTM, nn.GRU):
    for module_dtype, autocast_dtype in ((torch.float32, torch.float16),
                                         (torch.float32, torch.bfloat16),
                                         (torch.bfloat16, None), (torch.bfloat16, torch.bfloat16)):
        key = (layer_class.__name__, str(module_dtype).removeprefix("torch."),
               str(autocast_dtype or "off").removeprefix("torch."))
        results[key] = run(layer_class, module_dtype, autocast_dtype)
        seen, out_dtype, got, warned = results[key]
        print(f"{key[0]:4} module {key[1]:8} autocast {key[2]:8} -> cuDNN gets {got};"
              f" output {str(out_dtype)[6:]}" + "".join(f"\n     warning: {w}" for w in warned))
major, minor = torch.cuda.get_device_capability()
print(f"PyTorch {torch.__version__}, built with cuDNN "
      f"{'.'.join(map(str, torch._C._cudnn.getCompileVersion()))}, runs cuDNN "
      f"{torch.backends.cudnn.version()}, {torch.cuda.get_device_name()} "
      f"(compute capability {major}.{minor})")
# --8<-- [end:show]
half = {"input": torch.float16, "weights": torch.float16, "h0": torch.float16}
bf16_on_cudnn = major >= 8 and torch._C._cudnn.getCompileVersion() >= (9, 13, 0)
for (name, module_dtype, autocast), (seen, out_dtype, _, _) in results.items():
    if autocast != "off":  # autocast: float16 to cuDNN, whatever its dtype
        reaches = module_dtype == "float32" or bf16_on_cudnn  # a bfloat16 input must pass first
        assert seen == (half if reaches else None), (name, module_dtype, autocast, seen)
        assert out_dtype == torch.float16 or not reaches, (name, module_dtype, out_dtype)
    else:  # a bfloat16 module without autocast: cuDNN in bfloat16 only where PyTorch allows it
        bf16 = {k: torch.bfloat16 for k in half}
        assert seen == (bf16 if bf16_on_cudnn else None), (name, seen, bf16_on_cudnn)
        assert out_dtype == torch.bfloat16, (name, out_dtype)
