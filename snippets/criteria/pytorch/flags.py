"""PyTorch: the torch.backends.cudnn switches, and the dtypes cuDNN takes."""
# snippet: timeout=120
# --8<-- [start:show]
import torch

cudnn = torch.backends.cudnn
print(f"PyTorch {torch.__version__}, built with CUDA: {torch.version.cuda}")
print("cuDNN available:", cudnn.is_available(), " version:", cudnn.version())
print("enabled:", cudnn.enabled, " benchmark:", cudnn.benchmark,
      " deterministic:", cudnn.deterministic)
print("dtypes cuDNN takes (torch.backends.cudnn.CUDNN_TENSOR_DTYPES):",
      sorted(str(d) for d in cudnn.CUDNN_TENSOR_DTYPES))

with cudnn.flags(enabled=False):  # turns cuDNN off for the block: the generic kernel runs
    print("inside cudnn.flags(enabled=False): enabled =", cudnn.enabled)
print("after the block: enabled =", cudnn.enabled)
# --8<-- [end:show]
assert cudnn.enabled and not cudnn.benchmark and not cudnn.deterministic
assert set(cudnn.CUDNN_TENSOR_DTYPES) == {torch.float16, torch.float32, torch.float64}
