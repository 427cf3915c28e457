"""PyTorch: the checker on a module, on this machine."""
# snippet: timeout=120
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
# --8<-- [start:show]
import torch
from torch import nn

from cudnn_check import check_module

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.LSTM(16, 32, bidirectional=True, batch_first=True)
        self.decoder_cell = nn.GRUCell(64, 32)  # stepped by hand in forward()

model = Tagger()
for f in check_module(model):
    print(f)
# --8<-- [end:show]
found = sorted((f.layer, f.criterion) for f in check_module(model))
expected = [("decoder_cell", "cell_loop")]
if not torch.cuda.is_available():
    expected.insert(1, ("encoder", "device"))
assert found == expected, found
