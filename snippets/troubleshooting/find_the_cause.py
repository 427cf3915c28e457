"""Where a cuDNN status from an RNN comes from: run the failing batch where errors are reported
as they happen (here, the CPU). A token id one past the vocabulary makes the Embedding in front
of the LSTM read out of bounds; the CPU names the operation at once.

Run it as it is: python find_the_cause.py (on a GPU, with CUDA_LAUNCH_BLOCKING=1)
"""
# snippet: timeout=60
# --8<-- [start:show]
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
embed = nn.Embedding(500, 16).to(device)  # token ids 0 to 499
lstm = nn.LSTM(16, 32, batch_first=True).to(device)
tokens = torch.tensor([[1, 2, 500]], device=device)  # 500: one past the vocabulary

try:
    hidden = embed(tokens)
    out, _ = lstm(hidden)
    out.sum().item()  # wait for the GPU, so that its error is reported here
    print(f"on {device}: no error")
except (IndexError, RuntimeError) as err:
    print(f"on {device}: {type(err).__name__}: {str(err).splitlines()[0]}")
# --8<-- [end:show]
