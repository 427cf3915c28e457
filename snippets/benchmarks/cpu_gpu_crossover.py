"""Small RNNs: the CPU or the GPU? PyTorch nn.LSTM on this machine's CPU (all its cores) and on
its GPU (cuDNN), from 8 to 512 units, at batch 1 and 32, a training step and inference. The
two run in turns, as in the speed-up benchmark (_speedup.py); the ratio is CPU time / GPU time.
"""
# snippet: timeout=1800 needs=gpu exclusive
import torch
from torch import nn

import _bench
import _speedup  # the shared half of the speed-up benchmark, next to this file

on_gpu = _speedup.use_gpu(torch.cuda.is_available(), "PyTorch sees no CUDA device",
                          "comparing the CPU with the GPU needs both")
gpu = "cuda" if on_gpu else "cpu"  # a dry run compares the CPU with itself
sync = torch.cuda.synchronize if on_gpu else _speedup.no_sync
torch.backends.cudnn.allow_tf32 = False  # FP32 on the GPU, as on the CPU
torch.backends.cuda.matmul.allow_tf32 = False
dry = _speedup.dry_run()
UNITS = [8, 16] if dry else [8, 16, 32, 64, 128, 256, 512]
BATCHES, STEPS, FEATURES = ([1] if dry else [1, 32]), (4 if dry else 32), 16


# --8<-- [start:show]
# --8<-- [start:compare]
def step_on(device, mode, units, batch):
    """One call of the same LSTM, weights and data on one device."""
    torch.manual_seed(0)
    rnn = nn.LSTM(FEATURES, units, batch_first=True).to(device)
    x = torch.randn(batch, STEPS, FEATURES).to(device)
    opt = torch.optim.SGD(rnn.parameters(), lr=1e-3)

    def step():
        if mode == "inference":
            with torch.no_grad():
                rnn(x)
        else:
            opt.zero_grad()
            rnn(x)[0].pow(2).mean().backward()
            opt.step()
    return step
# --8<-- [end:compare]


rows, crossover = [], {}
for batch in BATCHES:
    for mode in ("train", "inference"):
        for units in UNITS:
            # paired() times the two in turns and returns (first, second, second / first).
            on_gpu_ms, on_cpu_ms, ratio = _speedup.paired(
                step_on(gpu, mode, units, batch), step_on("cpu", mode, units, batch), sync)
            rows.append({"variant": f"{mode}, batch {batch}", "x": units, "mode": mode,
                         "batch": batch, "cpu_ms": on_cpu_ms, "gpu_ms": on_gpu_ms, **ratio})
            print(f"batch {batch:3} {mode:9} {units:4} units: CPU {on_cpu_ms['median']:8.3f} ms, "
                  f"GPU {on_gpu_ms['median']:8.3f} ms, CPU/GPU {ratio['median']:6.2f}")
        faster = [r["x"] for r in rows if r["batch"] == batch and r["mode"] == mode
                  and r["median"] > 1]
        crossover[f"{mode}, batch {batch}"] = min(faster) if faster else None
for case, units in crossover.items():
    print(f"crossover, {case}: " + (f"the GPU is faster from {units} units" if units
                                    else "the CPU is faster at every size measured"))
# --8<-- [end:show]

_bench.write_result(
    "cpu_gpu_crossover", title=f"Small LSTM: CPU time / GPU time ({STEPS} steps, "
    f"{FEATURES} features; above 1 the GPU is faster)", metric="CPU time / GPU time",
    lower_is_better=False, x_label="units", x_log=True, results=rows, expects_gpu=True,
    crossover=crossover, torch=torch.__version__, cpu_threads=torch.get_num_threads(),
    **({"dry_run": True} if dry else {}))
print("measured on", _bench.provenance()["machine"])
