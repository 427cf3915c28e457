"""torch.jit.script on a bare nn.LSTM returns a module without forward; scripting a module that
holds the LSTM works. Run it as it is: python torchscript_lstm.py
"""
# snippet: timeout=60
import warnings

warnings.filterwarnings("ignore", message=".*is deprecated")  # torch.jit's own notice
# --8<-- [start:show]
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(2, 5, 3)
lstm = nn.LSTM(3, 4, batch_first=True)

scripted = torch.jit.script(lstm)
try:
    scripted(x)
except AttributeError as err:
    print("torch.jit.script(nn.LSTM): AttributeError:", err)


class Encoder(nn.Module):  # the LSTM inside a module of your own
    def __init__(self, lstm):
        super().__init__()
        self.lstm = lstm

    def forward(self, x):
        out, _ = self.lstm(x)
        return out


scripted = torch.jit.script(Encoder(lstm))
print("torch.jit.script(Encoder): same output:", torch.allclose(scripted(x), lstm(x)[0]))
# --8<-- [end:show]
