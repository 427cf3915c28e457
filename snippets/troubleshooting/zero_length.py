"""Empty sequences and nn.LSTM: an input of 0 steps is refused, and so is a length of 0 in a
packed batch. Drop the empty rows before the RNN and put their result back after it (zeros, or
the initial state), or give them a length of 1 and mask what they produce.
Run it as it is: python zero_length.py
"""
# snippet: timeout=60
# --8<-- [start:show]
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

torch.manual_seed(0)
lstm = nn.LSTM(3, 4, batch_first=True)

try:
    lstm(torch.randn(2, 0, 3))  # 2 sequences of 0 steps: a window with no steps
except RuntimeError as err:
    print("0 steps: RuntimeError:", err)

x = torch.randn(3, 5, 3)
lengths = torch.tensor([5, 0, 2])  # the second sequence is empty
try:
    pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
except RuntimeError as err:
    print("a length of 0 in a packed batch: RuntimeError:", err)

# The fix: run the non-empty rows only, and give the empty ones zeros (their h_n: zeros too).
keep = lengths > 0
packed = pack_padded_sequence(x[keep], lengths[keep], batch_first=True, enforce_sorted=False)
out_kept, (h_kept, _) = lstm(packed)
out_kept, _ = pad_packed_sequence(out_kept, batch_first=True, total_length=x.size(1))
out = x.new_zeros(x.size(0), x.size(1), 4)
out[keep] = out_kept
h_n = x.new_zeros(1, x.size(0), 4)
h_n[:, keep] = h_kept
print("empty rows dropped and put back: output", tuple(out.shape), "h_n", tuple(h_n.shape),
      "- the empty row is zeros:", bool((out[1] == 0).all() and (h_n[:, 1] == 0).all()))
# --8<-- [end:show]
assert torch.allclose(out[2, :2], lstm(x[2:3, :2])[0][0], atol=1e-6)
