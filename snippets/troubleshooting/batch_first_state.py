"""batch_first=True and the states of nn.LSTM: the input and output are (batch, steps, features),
the states h_n and c_n stay (layers x directions, batch, hidden). What h_n[-1] is: the last step
of the forward direction, or of the backward one in a bidirectional layer; with a packed batch,
each sequence's own last step. Run it as it is: python batch_first_state.py
"""
# snippet: timeout=60
# --8<-- [start:show]
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

torch.manual_seed(0)
x = torch.randn(2, 5, 3)  # batch_first: 2 sequences, 5 steps, 3 features
lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
out, (h_n, c_n) = lstm(x)
print("input", tuple(x.shape), "-> output", tuple(out.shape), "h_n", tuple(h_n.shape))

h = h_n.view(2, 2, 2, 4)  # (layers, directions, batch, hidden)
print("last layer, forward:  h_n == output[:, -1, :4]:", torch.allclose(h[-1, 0], out[:, -1, :4]))
print("last layer, backward: h_n == output[:, 0, 4:]: ", torch.allclose(h[-1, 1], out[:, 0, 4:]))
print("h_n.view(batch, -1)[0] holds the second sequence's state too:",
      torch.equal(h_n.view(2, -1)[0, 4:8], h_n[0, 1]))
print("h_n.permute(1, 0, 2) gives (batch, layers x directions, hidden):",
      tuple(h_n.permute(1, 0, 2).shape))

# A padded batch: output[:, -1] is a padding step for the shorter row; a packed one gives h_n
# at each sequence's own last step.
one = nn.LSTM(3, 4, batch_first=True)
lengths = torch.tensor([5, 2])
_, (h_packed, _) = one(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
short = one(x[1:, :2])[0][0, -1]
print("packed: h_n of the 2-step row is its step 2:", torch.allclose(h_packed[0, 1], short, atol=1e-6))
print("padded: output[1, -1] is its step 5 instead:", not torch.allclose(one(x)[0][1, -1], short))
# --8<-- [end:show]
