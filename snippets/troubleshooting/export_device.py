"""torch.export and an LSTM's initial state: the zeros PyTorch makes for a missing state are
written into the exported graph with the device of the export, so moving the exported module
to another device does not move them. PyTorch's "meta" device stands in for the GPU here.

Run it as it is: python export_device.py
"""
# snippet: timeout=120
import torch


def zeros_devices(program):
    """The devices the exported graph makes its zeros on."""
    return [str(node.kwargs["device"]) for node in program.graph.nodes
            if node.target == torch.ops.aten.zeros.default]


# --8<-- [start:show]
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(9, 16, batch_first=True, bidirectional=True)

    def forward(self, x):
        out, (h, c) = self.lstm(x)  # no initial state: PyTorch makes zeros
        return torch.cat([h[-2], h[-1]], dim=1)


class EncoderStateFromInput(Encoder):
    def forward(self, x):
        h0 = x.new_zeros(2, x.size(0), 16)  # made from the input: its device, its dtype
        out, (h, c) = self.lstm(x, (h0, h0))
        return torch.cat([h[-2], h[-1]], dim=1)


# zeros_devices(program): the devices the graph's aten.zeros nodes make their zeros on (above)
torch.manual_seed(0)
x = torch.randn(4, 3, 9)
other = "meta"  # on a GPU machine: "cuda"

program = torch.export.export(Encoder(), (x,))
print("exported on the CPU: the initial state's zeros are made on", zeros_devices(program))
moved = program.module().to(other)
try:
    moved(x.to(other))
except RuntimeError as err:
    print(f"moved to {other}: RuntimeError: {err}")

program = torch.export.export(EncoderStateFromInput(), (x,))
print("state made with x.new_zeros: zeros in the graph", zeros_devices(program))
print(f"moved to {other}:", tuple(program.module().to(other)(x.to(other)).shape))

program = torch.export.export(Encoder().to(other), (x.to(other),))
print(f"exported on {other}: the zeros are made on", zeros_devices(program))
# --8<-- [end:show]
