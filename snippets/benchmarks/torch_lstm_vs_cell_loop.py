"""PyTorch nn.LSTM (one fused call; cuDNN on a CUDA GPU) vs a Python loop over nn.LSTMCell.

Same weights, same data: the loop copies nn.LSTM's parameters into the cell. Times a forward
pass without gradients and a forward+backward pass.
"""
# snippet: timeout=240 exclusive
# --8<-- [start:show]
import torch
from torch import nn

import _bench  # timing and provenance helpers, next to this file

n = _bench.scale()
batch, steps, features, units = 64 * n, 30, 8, 64 * n
device = "cuda" if torch.cuda.is_available() else "cpu"
torch.backends.cudnn.allow_tf32 = False  # FP32 in both variants (cuDNN's default is TF32)
sync = torch.cuda.synchronize if device == "cuda" else None  # wait for the GPU before timing
torch.manual_seed(0)
x = torch.randn(steps, batch, features, device=device)  # same data for both variants

lstm = nn.LSTM(features, units).to(device)
cell = nn.LSTMCell(features, units).to(device)
with torch.no_grad():  # the same weights in both
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        getattr(cell, name).copy_(getattr(lstm, name + "_l0"))


# --8<-- [start:compare]
def fused():
    return lstm(x)[0][-1]


def cell_loop():
    h = c = torch.zeros(batch, units, device=device)
    for t in range(steps):
        h, c = cell(x[t], (h, c))
    return h


assert torch.allclose(fused(), cell_loop(), atol=1e-5), "the two variants must compute the same"

results = []
for variant, fn in (("nn.LSTM", fused), ("loop over nn.LSTMCell", cell_loop)):
    def inference():
        with torch.no_grad():
            fn()

    def train():
        lstm.zero_grad(), cell.zero_grad()
        fn().pow(2).mean().backward()

    for mode, step in (("inference", inference), ("train", train)):
        timing = _bench.measure(step, warmup=3, repeats=15, sync=sync)
        results.append({"variant": f"{variant} · {mode}", "mode": mode, **timing})
# --8<-- [end:compare]

for r in results:
    fused_ms = next(f["median"] for f in results if f["mode"] == r["mode"])
    print(f"{r['variant']:34} median {r['median']:7.2f} ms (IQR {r['q1']:.2f}-{r['q3']:.2f})"
          f"  {r['median'] / fused_ms:5.2f}x nn.LSTM")

_bench.write_result(
    "torch_lstm_vs_cell_loop",
    title=f"PyTorch LSTM on {device} (batch {batch}, {steps} steps, {units} units)"
          + (", on a CPU no variant runs cuDNN" if device == "cpu" else ""),
    metric="ms per call", lower_is_better=True, results=results,
    torch=torch.__version__, torch_device=device,
    cudnn=torch.backends.cudnn.version() if device == "cuda" else None)
print("measured on", _bench.provenance()["machine"])
# --8<-- [end:show]
