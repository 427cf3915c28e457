"""PyTorch: every nn.LSTM/GRU/RNN call asks whether cuDNN can take the input; a cell loop never does."""
# snippet: timeout=120
import warnings

warnings.filterwarnings("ignore", message="LSTM with projections is not supported with oneDNN")
# --8<-- [start:show]
import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

def rnn_ops(fn):
    """The RNN operators PyTorch runs for fn(), as its profiler names them."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    return sorted({e.key for e in prof.key_averages()
                   if e.key in ("aten::cudnn_is_acceptable", "aten::lstm", "aten::gru",
                                "aten::rnn_tanh", "aten::lstm_cell", "aten::_cudnn_rnn")})

x = torch.zeros(5, 2, 3)  # (time, batch, features)
packed = nn.utils.rnn.pack_padded_sequence(x, lengths=[5, 3])
cell = nn.LSTMCell(3, 4)

def cell_loop():
    h = c = torch.zeros(2, 4)
    for t in range(5):
        h, c = cell(x[t], (h, c))

cases = {
    "nn.LSTM(3, 4)": lambda: nn.LSTM(3, 4)(x),
    "nn.LSTM(3, 4, bias=False)": lambda: nn.LSTM(3, 4, bias=False)(x),
    "nn.LSTM(3, 4, proj_size=2)": lambda: nn.LSTM(3, 4, proj_size=2)(x),
    "nn.LSTM(3, 4, num_layers=2, dropout=0.3)": lambda: nn.LSTM(3, 4, 2, dropout=0.3)(x),
    "nn.LSTM(3, 4, bidirectional=True)": lambda: nn.LSTM(3, 4, bidirectional=True)(x),
    "nn.LSTM(3, 4)(PackedSequence)": lambda: nn.LSTM(3, 4)(packed),
    "nn.GRU(3, 4)": lambda: nn.GRU(3, 4)(x),
    "nn.RNN(3, 4)": lambda: nn.RNN(3, 4)(x),
    "nn.LSTMCell(3, 4) in a Python loop": cell_loop,
}
results = {label: rnn_ops(fn) for label, fn in cases.items()}
for label, ops in results.items():
    print(f"{label:41} {', '.join(ops)}")
print("cuDNN takes this CPU input:", torch.cudnn_is_acceptable(x))
# --8<-- [end:show]
for label, ops in results.items():
    asks = "aten::cudnn_is_acceptable" in ops
    assert asks == ("LSTMCell" not in label), (label, ops)
    assert "aten::_cudnn_rnn" not in ops  # a CPU input never reaches cuDNN
assert results["nn.LSTMCell(3, 4) in a Python loop"] == ["aten::lstm_cell"]
assert torch.cudnn_is_acceptable(x) is False
