"""On a GPU: the longest sequence one cuDNN call takes (nn.LSTM and nn.GRU), and how to run a
bidirectional LSTM over a longer one. Cutting the sequence into pieces and handing the state on
is right for the forward direction only: the reverse direction of the first piece must see the
steps after it. Run it as it is: python longest_sequence.py

BENCH_CPU_DRY_RUN=1 runs the same code on the CPU, with a small limit pretended, to check it
(the tests do); that says nothing about cuDNN.
"""
# snippet: timeout=300 needs=gpu
import copy
import os
import sys

import torch
from torch import nn

DRY_RUN = os.environ.get("BENCH_CPU_DRY_RUN") == "1"
if not torch.cuda.is_available() and not DRY_RUN:
    print("needs a GPU: PyTorch sees no CUDA device; the limit is cuDNN's, on a GPU only.")
    sys.exit(77)
device = "cpu" if DRY_RUN else "cuda"
print(f"PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, on {device}")


# --8<-- [start:limit]
def one_call_works(layer, steps):
    x = torch.zeros(steps, 1, layer.input_size, device=device)  # (time, batch, features)
    try:
        with torch.no_grad():
            layer(x)
        return True, ""
    except RuntimeError as err:
        return False, str(err).splitlines()[0]


def longest(layer, low=65_535, cap=1 << 19):
    """The longest sequence one call takes, searched between `low` and `cap` steps."""
    ok, _ = one_call_works(layer, low)
    if not ok:
        return None, f"fails at {low} already"
    high = low + 1
    while high <= cap:
        ok, error = one_call_works(layer, high)
        if not ok:
            break
        low, high = high, high * 2
    else:
        return None, f"no limit up to {cap} steps"
    first_error = error
    while high - low > 1:  # the first length that fails lies in (low, high]
        mid = (low + high) // 2
        ok, error = one_call_works(layer, mid)
        low, high = (mid, high) if ok else (low, mid)
        first_error = first_error if ok else error
    return low, first_error


limits = {}
for name in ("LSTM", "GRU"):
    layer = getattr(nn, name)(4, 8).to(device)
    limits[name], error = longest(layer, low=1_000, cap=4_000) if DRY_RUN else longest(layer)
    print(f"nn.{name}: longest sequence in one call: {limits[name]}"
          + (f"; one step more: RuntimeError: {error}" if limits[name] else f" ({error})"))
# --8<-- [end:limit]


# --8<-- [start:pieces]
def in_pieces(lstm, x, steps, state=None):
    """A one-direction LSTM over x, at most `steps` steps a call, the state handed on."""
    outputs = []
    for piece in torch.split(x, steps, dim=0):
        out, state = lstm(piece, state)
        outputs.append(out)
    return torch.cat(outputs)


def bidirectional_in_pieces(bilstm, x, steps):
    """A bidirectional nn.LSTM (time first, with biases) over a long sequence, layer by layer:
    each direction is a one-direction LSTM with its weights, run in pieces; the reverse one
    over the reversed sequence, its output reversed back."""
    out = x
    for layer in range(bilstm.num_layers):
        halves = []
        for suffix in ("", "_reverse"):
            one = nn.LSTM(out.shape[-1], bilstm.hidden_size).to(x.device)
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(one, f"{name}_l0").data.copy_(getattr(bilstm, f"{name}_l{layer}{suffix}"))
            seq = out.flip(0) if suffix else out
            y = in_pieces(one, seq, steps)
            halves.append(y.flip(0) if suffix else y)
        out = torch.cat(halves, dim=-1)
    return out
# --8<-- [end:pieces]


# --8<-- [start:check]
limit = limits["LSTM"] or (1_000 if DRY_RUN else 65_535)
torch.manual_seed(0)
bilstm = nn.LSTM(4, 16, num_layers=2, bidirectional=True).to(device)
x = torch.randn(limit + 100, 2, 4, device=device)  # longer than one call takes
with torch.no_grad():
    whole = copy.deepcopy(bilstm).cpu()(x.cpu())[0]  # the reference: one call, on the CPU
    naive = in_pieces(bilstm, x, limit).cpu()  # pieces of the whole bidirectional layer
    right = bidirectional_in_pieces(bilstm, x, limit).cpu()
print(f"bidirectional, {x.shape[0]} steps, pieces of {limit}, against one call on the CPU:")
print(f"  the layer in pieces, state handed on:   max |difference| {(naive - whole).abs().max():.1e}")
print(f"  each direction in pieces (above):       max |difference| {(right - whole).abs().max():.1e}")
# --8<-- [end:check]
assert torch.allclose(right, whole, atol=1e-4), (right - whole).abs().max()
assert not torch.allclose(naive, whole, atol=1e-4), "handing the state on should differ here"
