"""PyTorch's RNN messages as a CPU shows them: the enforce_sorted error for real, and the
cases whose cuDNN messages only a GPU prints (they run fine here).

Run it as it is: python pytorch_cpu.py
"""
# snippet: timeout=120
# --8<-- [start:show]
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(2, 5, 3)  # two sequences of 5 steps, batch first
lengths = [3, 5]          # the longer one second: not sorted

# 1. pack_padded_sequence wants the lengths in decreasing order unless you say otherwise.
try:
    nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True)
    raise SystemExit("expected a RuntimeError for unsorted lengths")
except RuntimeError as err:
    print("enforce_sorted=True:  RuntimeError:", err)
    assert str(err).startswith("`lengths` array must be sorted in decreasing order")

lstm = nn.LSTM(3, 4, batch_first=True)
packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
out, out_lengths = nn.utils.rnn.pad_packed_sequence(lstm(packed)[0], batch_first=True)
for i, n in enumerate(lengths):  # each row is that sequence run alone, in the input's order
    assert torch.allclose(out[i, :n], lstm(x[i:i + 1, :n])[0][0], atol=1e-6)
print("enforce_sorted=False: lengths", out_lengths.tolist(), "kept in the input's order; "
      "each row equals its sequence run alone")

# 2. Backward through an LSTM in eval mode: the CPU kernel allows it (cuDNN does not).
lstm.eval()
lstm(x)[0].sum().backward()
print("eval mode, backward:  works on the CPU; weight_hh_l0.grad", tuple(lstm.weight_hh_l0.grad.shape))

# 3. A weight replaced by hand is a separate tensor; flatten_parameters() on the CPU does nothing.
lstm.weight_hh_l0 = nn.Parameter(lstm.weight_hh_l0.detach().clone())
before = [w.data_ptr() for w in lstm._flat_weights]
lstm.flatten_parameters()
assert [w.data_ptr() for w in lstm._flat_weights] == before
print("flatten_parameters(): no-op on the CPU (weights where they were)")

# 4. The two determinism switches are separate flags.
torch.use_deterministic_algorithms(True)
print("use_deterministic_algorithms(True): torch.backends.cudnn.deterministic is still",
      torch.backends.cudnn.deterministic)
assert torch.backends.cudnn.deterministic is False
# --8<-- [end:show]
