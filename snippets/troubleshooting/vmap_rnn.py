"""torch.func.vmap over nn.LSTM and nn.GRU: PyTorch has no batching rule for the whole-sequence
RNN ops, and cannot fall back to a loop for them, so vmap stops; the cells fall back to a loop,
with a warning. The same model then runs by folding the vmapped axis into the batch, or, for an
ensemble of weights, by a loop over the models. Run it as it is: python vmap_rnn.py
"""
# snippet: timeout=60
# --8<-- [start:show]
import warnings

import torch
from torch import nn
from torch.func import functional_call, jacrev, stack_module_state, vmap

torch.manual_seed(0)
lstm, gru = nn.LSTM(3, 4, batch_first=True), nn.GRU(3, 4, batch_first=True)
xs = torch.randn(6, 2, 5, 3)  # 6 batches of 2 sequences of 5 steps

for name, rnn in (("LSTM", lstm), ("GRU", gru)):
    try:
        vmap(lambda x: rnn(x)[0])(xs)
    except RuntimeError as err:
        print(f"vmap over nn.{name}: RuntimeError: {err}")

# 1. The vmapped axis is only more batch: fold it into the batch, run once, unfold.
folded = lstm(xs.flatten(0, 1))[0].unflatten(0, xs.shape[:2])
one_by_one = torch.stack([lstm(x)[0] for x in xs])
print("folded into the batch, same as one call per batch:", torch.allclose(folded, one_by_one))

# 2. An ensemble (one set of weights per model): stack_module_state works, vmap does not.
models = [nn.LSTM(3, 4, batch_first=True) for _ in range(3)]
params, buffers = stack_module_state(models)
base = nn.LSTM(3, 4, batch_first=True).to("meta")
x = xs[0]
try:
    vmap(lambda p, b: functional_call(base, (p, b), (x,))[0])(params, buffers)
except RuntimeError as err:
    print("vmap over an ensemble of nn.LSTM: RuntimeError:", str(err).split(".")[0])
ensemble = torch.stack([m(x)[0] for m in models])  # a loop over the models: one call each
print("ensemble by a loop:", tuple(ensemble.shape))

# 3. A cell (nn.GRUCell) runs under vmap, through a slow fallback that warns.
cell = nn.GRUCell(3, 4)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    stepped = vmap(cell)(xs[:, :, 0])
print("vmap over nn.GRUCell:", tuple(stepped.shape), "- UserWarning:",
      str(caught[0].message).split(" (Triggered")[0])

# 4. A Jacobian: jacrev maps over the backward pass only, which runs here on a CPU.
print("jacrev through nn.LSTM, one sequence:", tuple(jacrev(lambda x: lstm(x)[0])(xs[0, :1]).shape))
# --8<-- [end:show]
assert torch.allclose(folded, one_by_one)
