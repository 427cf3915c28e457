"""PyTorch RNNs that are not an nn.RNN module, for tests/content/test_checker_blind_spots.py (CPU) and
tests/content/test_checker_module_gpu.py (GPU): torch.export graphs, torch._VF.lstm and torch.lstm called
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


# ----------------------------------------------------------------- every other recurrent module
# Generated modules for tests/content/test_checker_blind_spots.py (#43): PyTorch's recurrent modules
# (nn.RNN with tanh or relu, nn.LSTM, nn.GRU, their cells stepped in a loop, the quantizable
# and the dynamically quantized ones) and loops a model writes itself, one or two in a module.
class Whole(nn.Module):
    """An nn.RNN, nn.LSTM or nn.GRU over the whole sequence: its output sequence."""
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        return self.rnn(x)[0]


class StepLoop(nn.Module):
    """An nn.RNNCell, nn.LSTMCell or nn.GRUCell stepped through time in Python."""
    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def forward(self, x):
        state = None
        for t in range(x.size(1)):
            state = self.cell(x[:, t], state)
        return state[0] if isinstance(state, tuple) else state


class Elman(nn.Module):
    """A plain RNN written by hand: h = act(W x_t + U h), each step feeding the next."""
    def __init__(self, act="tanh", features=3, hidden=4):
        super().__init__()
        self.ih, self.hh = nn.Linear(features, hidden), nn.Linear(hidden, hidden)
        self.act, self.hidden = getattr(torch, act), hidden

    def forward(self, x):
        h = x.new_zeros(x.size(0), self.hidden)
        for t in range(x.size(1)):
            h = self.act(self.ih(x[:, t]) + self.hh(h))
        return h


class PerStep(nn.Module):
    """Not recurrent: the same Linear and tanh on each time step on its own (no step feeds
    the next), which a checker must not take for an RNN."""
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3, 4), nn.Tanh())

    def forward(self, x):
        return torch.stack([self.mlp(x[:, t]) for t in range(x.size(1))], 1)


class GatedPerStep(nn.Module):
    """Not recurrent either: a gated unit (sigmoid and tanh, as an LSTM's gates) on each time
    step on its own, as a per-step score is."""
    def __init__(self):
        super().__init__()
        self.gate, self.value = nn.Linear(3, 4), nn.Linear(3, 4)

    def forward(self, x):
        return torch.stack([torch.sigmoid(self.gate(x[:, t])) * torch.tanh(self.value(x[:, t]))
                            for t in range(x.size(1))], 1)


NOT_RECURRENT = [PerStep, GatedPerStep]


class Parts(nn.Module):
    """One or two recurrent parts, each run on the input."""
    def __init__(self, parts):
        super().__init__()
        self.parts = nn.ModuleList(parts)

    def forward(self, x):
        return [part(x) for part in self.parts]


PART_KINDS = ["nn.LSTM", "nn.GRU", "nn.RNN tanh", "nn.RNN relu", "nn.LSTMCell loop",
              "nn.GRUCell loop", "nn.RNNCell tanh loop", "nn.RNNCell relu loop",
              "hand-written tanh RNN", "hand-written relu RNN", "hand-written GRU",
              "quantizable LSTM", "dynamically quantized", "torch._VF.lstm"]


def part(kind: str, rng):
    """One recurrent part of the given kind, its arguments drawn from rng (random.Random)."""
    layers, both = rng.choice([1, 2]), rng.random() < 0.4
    if kind.startswith("nn.") and not kind.endswith("loop"):
        cls, act = kind[3:].split()[0], kind.split()[-1]
        extra = {"nonlinearity": act} if cls == "RNN" else {}
        return Whole(getattr(nn, cls)(3, 4, num_layers=layers, bidirectional=both,
                                      batch_first=True, **extra))
    if kind.endswith("loop") and kind.startswith("nn."):
        cls, act = kind[3:].split()[0], kind.split()[1]
        extra = {"nonlinearity": act} if cls == "RNNCell" else {}
        return StepLoop(getattr(nn, cls)(3, 4, **extra))
    if kind.startswith("hand-written"):
        return GateLoop() if kind.endswith("GRU") else Elman(kind.split()[1])
    if kind == "quantizable LSTM":
        return Whole(torch.ao.nn.quantizable.LSTM(3, 4, num_layers=layers, batch_first=True))
    if kind == "dynamically quantized":
        inner = rng.choice(["nn.LSTM", "nn.GRU", "nn.RNNCell tanh loop"])
        float_part = part(inner, rng)
        return torch.ao.quantization.quantize_dynamic(
            float_part, {nn.LSTM, nn.GRU, nn.RNNCell}, dtype=torch.qint8)
    return OwnLSTM()


def generated(n: int, seed: int = 0) -> list:
    """n modules (name, Parts module, the kind of each of its parts in order, None for a
    non-recurrent loop, PerStep and GatedPerStep in turn): every kind comes round, alone or
    beside another, and a loop that is not a recurrence now and then."""
    import random
    rng, out, plain = random.Random(seed), [], 0
    for i in range(n):
        kinds = [PART_KINDS[i % len(PART_KINDS)]]
        if rng.random() < 0.35:
            kinds.append(rng.choice(PART_KINDS))
        if rng.random() < 0.2:
            kinds.append(None)
        rng.shuffle(kinds)
        parts, names = [], []
        for k in kinds:
            if k is None:
                cls, plain = NOT_RECURRENT[plain % len(NOT_RECURRENT)], plain + 1
                parts.append(cls())
                names.append(cls.__name__)
            else:
                parts.append(part(k, rng))
                names.append(k)
        out.append((" + ".join(names), Parts(parts), kinds))
    return out
