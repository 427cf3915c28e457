"""On a GPU: what packing a batch of sequences of different lengths costs an nn.LSTM on cuDNN.
A training step (forward and backward) on the same batch: padded (every row runs the longest
length), packed from a batch sorted by length (enforce_sorted=True), and packed from the batch
as it comes (enforce_sorted=False: PyTorch sorts it and puts the rows back). Timed in turns.
Run it as it is: python packed_sequence.py
"""
# snippet: timeout=300 needs=gpu exclusive
import time

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

import _bench
import _speedup  # the shared half of the speed-up benchmark, next to this file

on_gpu = _speedup.use_gpu(torch.cuda.is_available(), "PyTorch sees no CUDA device",
                          "what packing costs cuDNN is measured on a GPU only")
device = "cuda" if on_gpu else "cpu"
sync = torch.cuda.synchronize if on_gpu else (lambda: None)
small = _speedup.dry_run() or _bench.quick()
batch, longest, units = (4, 8, 8) if small else (64, 256, 256)
# --8<-- [start:show]
torch.manual_seed(0)
lstm = nn.LSTM(units, units, batch_first=True).to(device)
lengths = torch.randint(longest // 8, longest + 1, (batch,))
lengths[0] = longest
x = torch.randn(batch, longest, units, device=device)
order = torch.argsort(lengths, descending=True)
x_sorted, lengths_sorted = x[order], lengths[order]


def padded():
    return lstm(x)[0]


def packed_sorted():
    packed = pack_padded_sequence(x_sorted, lengths_sorted, batch_first=True)
    return pad_packed_sequence(lstm(packed)[0], batch_first=True)[0]


def packed_unsorted():
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    return pad_packed_sequence(lstm(packed)[0], batch_first=True)[0]


VARIANTS = {"padded": padded, "packed, enforce_sorted=True": packed_sorted,
            "packed, enforce_sorted=False": packed_unsorted}
# The two packed variants compute the same rows, in another order.
assert torch.allclose(packed_sorted(), packed_unsorted()[order], atol=1e-5)

times = {name: [] for name in VARIANTS}
for rep in range(3 + (3 if small else 15)):  # 3 warm-ups, then timed in turns
    for name, fn in VARIANTS.items():
        lstm.zero_grad()
        sync()
        start = time.perf_counter()
        fn().pow(2).mean().backward()
        sync()
        if rep >= 3:
            times[name].append((time.perf_counter() - start) * 1000)
results = [{"variant": name, **_bench.spread(ms)} for name, ms in times.items()]
base = results[1]["median"]
for r in results:
    print(f"{r['variant']:30} median {r['median']:7.3f} ms (IQR {r['q1']:.3f}-{r['q3']:.3f})"
          f"  {r['median'] / base:5.2f}x enforce_sorted=True")
# --8<-- [end:show]
_bench.write_result(
    "packed_sequence", title=f"nn.LSTM training step, batch {batch} of lengths "
    f"{int(lengths.min())}-{longest}, {units} units: padded vs packed",
    metric="ms per training step", lower_is_better=True, results=results,
    torch=torch.__version__, cudnn=torch.backends.cudnn.version() if on_gpu else None,
    expects_gpu=True, **({"dry_run": True} if _speedup.dry_run() else {}))
print("measured on", _bench.provenance()["machine"])
