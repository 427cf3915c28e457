"""Where an LSTM's NaN comes from: a NaN in the input spreads to every later step of its row; an
inf or a huge value is squashed by the gates on this CPU (a GPU may give NaN for the same row,
as reported); float16 holds nothing above 65504. Then the check that finds the bad rows.

Run it as it is: python nan_inputs.py
"""
# snippet: timeout=60
# --8<-- [start:show]
import torch
from torch import nn

torch.manual_seed(0)
lstm = nn.LSTM(4, 8, batch_first=True)
x = torch.randn(3, 5, 4)  # 3 sequences of 5 steps


def finite_steps(out):
    """Per sequence, which steps of the output hold only finite numbers."""
    return ["".join("y" if torch.isfinite(step).all() else "n" for step in row) for row in out]


for bad in (float("nan"), float("inf"), 1e30):
    y = x.clone()
    y[1, 2, 0] = bad  # one value, in sequence 1 at step 2
    with torch.no_grad():
        out, _ = lstm(y)
    print(f"input {bad!r:>6} at sequence 1, step 2: finite steps per sequence", finite_steps(out))

print("float16 holds up to", torch.finfo(torch.float16).max, "; 70000.0 becomes",
      torch.tensor(70000.0).half().item())

batch = x.clone()
batch[2, 4, 3] = float("nan")
bad_rows = (~torch.isfinite(batch)).flatten(1).any(dim=1)
print("rows with a NaN or an inf:", bad_rows.nonzero().flatten().tolist())
# --8<-- [end:show]
