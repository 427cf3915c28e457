"""On a GPU: PyTorch's profiler names the cuDNN RNN op for nn.LSTM/GRU/RNN, and not for a cell loop."""
# snippet: timeout=300 needs=gpu
import sys

import torch

if not torch.cuda.is_available():
    print("needs a GPU: torch.cuda.is_available() is False, cuDNN cannot run here.")
    sys.exit(77)
# --8<-- [start:show]
from torch import nn
from torch.profiler import ProfilerActivity, profile

def cudnn_ran(fn) -> bool:
    fn()  # warm up
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return any(e.key == "aten::_cudnn_rnn" for e in prof.key_averages())

x = torch.zeros(20, 8, 16, device="cuda")  # (time, batch, features)
packed = nn.utils.rnn.pack_padded_sequence(x, lengths=[20] * 4 + [10] * 4)
cell = nn.LSTMCell(16, 32).cuda()

def cell_loop():
    h = c = torch.zeros(8, 32, device="cuda")
    for t in range(20):
        h, c = cell(x[t], (h, c))

def no_cudnn():
    with torch.backends.cudnn.flags(enabled=False):
        nn.LSTM(16, 32).cuda()(x)

cases = {
    "nn.LSTM(16, 32)": (lambda: nn.LSTM(16, 32).cuda()(x), True),
    "nn.LSTM(16, 32, bias=False)": (lambda: nn.LSTM(16, 32, bias=False).cuda()(x), True),
    "nn.LSTM(16, 32, proj_size=8)": (lambda: nn.LSTM(16, 32, proj_size=8).cuda()(x), True),
    "nn.LSTM(16, 32, 2, dropout=0.3)": (lambda: nn.LSTM(16, 32, 2, dropout=0.3).cuda()(x), True),
    "nn.LSTM(16, 32, bidirectional=True)":
        (lambda: nn.LSTM(16, 32, bidirectional=True).cuda()(x), True),
    "nn.LSTM(16, 32)(PackedSequence)": (lambda: nn.LSTM(16, 32).cuda()(packed), True),
    "nn.GRU(16, 32)": (lambda: nn.GRU(16, 32).cuda()(x), True),
    "nn.RNN(16, 32)": (lambda: nn.RNN(16, 32).cuda()(x), True),
    "nn.LSTM(16, 32).half()": (lambda: nn.LSTM(16, 32).cuda().half()(x.half()), True),
    "nn.LSTMCell(16, 32) in a Python loop": (cell_loop, False),
    "nn.LSTM under cudnn.flags(enabled=False)": (no_cudnn, False),
}
results = {label: cudnn_ran(fn) for label, (fn, _) in cases.items()}
for label, ran in results.items():
    print(f"{label:42} aten::_cudnn_rnn: {ran}")
print(f"PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
      f"{torch.cuda.get_device_name()}")
# --8<-- [end:show]
wrong = [label for label, (fn, expected) in cases.items() if results[label] != expected]
assert not wrong, wrong
