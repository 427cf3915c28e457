"""What PyTorch says about cuDNN, and whether an nn.LSTM actually ran on it.

Run it as it is: python torch_cudnn.py
"""
# snippet: timeout=120
# --8<-- [start:show]
import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

cudnn = torch.backends.cudnn
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}")
print(f"cudnn.is_available() {cudnn.is_available()}")
print(f"cudnn.version()      {cudnn.version()}")        # None on a CPU-only build
print(f"cudnn.enabled        {cudnn.enabled}")          # False: never use cuDNN
print(f"cudnn.benchmark      {cudnn.benchmark}")        # True: time algorithms, keep the fastest
print(f"cudnn.deterministic  {cudnn.deterministic}")    # True: only deterministic algorithms

device = "cuda" if torch.cuda.is_available() else "cpu"
lstm = nn.LSTM(input_size=8, hidden_size=16, batch_first=True).to(device)
lstm.flatten_parameters()  # one contiguous weight buffer for cuDNN; a no-op on the CPU
x = torch.randn(4, 10, 8, device=device)
activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
with profile(activities=activities) as prof:
    out, (h, c) = lstm(x)
ops = {e.key for e in prof.key_averages()}
rnn_ops = sorted(op for op in ops if "rnn" in op or op == "aten::lstm")
print(f"device {device}: output {tuple(out.shape)}, RNN ops {rnn_ops}")
print(f"ran on cuDNN: {'aten::_cudnn_rnn' in ops}")
# --8<-- [end:show]

# Self-checks: cuDNN is used exactly when the tensors are on a CUDA device with cuDNN enabled.
assert out.shape == (4, 10, 16) and h.shape == (1, 4, 16)
expected = device == "cuda" and cudnn.is_available() and cudnn.enabled
assert ("aten::_cudnn_rnn" in ops) == expected, (device, rnn_ops)
if device == "cpu":
    assert not cudnn.is_acceptable(x)  # a CPU tensor is never acceptable to cuDNN
