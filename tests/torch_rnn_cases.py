"""PyTorch RNNs that are not an nn.RNN module, for tests/test_checker_blind_spots.py (CPU) and
tests/test_checker_module_gpu.py (GPU): torch.export graphs, torch._VF.lstm and torch.lstm called
with a module's own parameters, torch.ao.nn.quantizable.LSTM, loops over cells or gates, and a
plain nn.GRU beside them. Imports PyTorch only."""
from __future__ import annotations

import torch
from torch import nn


class OwnLSTM(nn.Module):
    """An LSTM from its own parameters, run by torch._VF.lstm (as nn.LSTM does) or torch.lstm."""
    def __init__(self, op=None, hidden=4, features=3):
        super().__init__()
        self.w_ih = nn.Parameter(torch.randn(4 * hidden, features) * 0.1)
        self.w_hh = nn.Parameter(torch.randn(4 * hidden, hidden) * 0.1)
        self.b_ih = nn.Parameter(torch.zeros(4 * hidden))
        self.b_hh = nn.Parameter(torch.zeros(4 * hidden))
        self.op, self.hidden = op or torch._VF.lstm, hidden

    def forward(self, x):
        h0 = x.new_zeros(1, x.size(0), self.hidden)
        weights = [self.w_ih, self.w_hh, self.b_ih, self.b_hh]
        return self.op(x, (h0, h0), weights, True, 1, 0.0, self.training, False, True)[0]


class GateLoop(nn.Module):
    """A GRU written by hand: Linear gates in a Python loop over time steps."""
    def __init__(self, features=3, hidden=4):
        super().__init__()
        self.ih, self.hh, self.hidden = nn.Linear(features, 2 * hidden), \
            nn.Linear(hidden, 2 * hidden), hidden

    def forward(self, x):
        h = x.new_zeros(x.size(0), self.hidden)
        for t in range(x.size(1)):
            z, n = (self.ih(x[:, t]) + self.hh(h)).chunk(2, 1)
            h = torch.sigmoid(z) * h + (1 - torch.sigmoid(z)) * torch.tanh(n)
        return h


class CellLoop(nn.Module):
    """torch.lstm_cell with the module's own parameters, one call per time step."""
    def __init__(self, features=3, hidden=4):
        super().__init__()
        self.w_ih = nn.Parameter(torch.randn(4 * hidden, features) * 0.1)
        self.w_hh = nn.Parameter(torch.randn(4 * hidden, hidden) * 0.1)
        self.hidden = hidden

    def forward(self, x):
        h = c = x.new_zeros(x.size(0), self.hidden)
        for t in range(x.size(1)):
            h, c = torch.lstm_cell(x[:, t], (h, c), self.w_ih, self.w_hh)
        return h


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.GRU(3, 4, batch_first=True)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.encoder(x)[0])


X = torch.randn(2, 5, 3)  # (batch, time, features)
NAMES = ["torch._VF.lstm", "torch.lstm", "torch.export", "torch.export .module()",
         "quantizable LSTM", "Linear gates in a loop", "torch.lstm_cell in a loop",
         "exported loop", "nn.GRU"]


def modules(device: str = "cpu") -> dict:
    """Every case by name, its parameters on `device` (the graphs exported there)."""
    x = X.to(device)
    exported = torch.export.export(OwnLSTM().to(device), (x,))
    return {"torch._VF.lstm": OwnLSTM().to(device), "torch.lstm": OwnLSTM(torch.lstm).to(device),
            "torch.export": exported, "torch.export .module()": exported.module(),
            "quantizable LSTM": torch.ao.nn.quantizable.LSTM(3, 4, batch_first=True).to(device),
            "Linear gates in a loop": GateLoop().to(device),
            "torch.lstm_cell in a loop": CellLoop().to(device),
            "exported loop": torch.export.export(GateLoop().to(device), (x,)),
            "nn.GRU": Tagger().to(device)}
