"""The fastest LSTM on one GPU, by path, on the same sizes: cuDNN (nn.LSTM), the strongest
generic loop (the input projection as one matrix product, one compiled step called once per
time step, the loop replayed from a CUDA graph), and FlashRNN's fused Triton kernel; forward,
and forward with backward, the input projection included in every path; BF16, FP16 and, where
a path has it, strict FP32. Each path's output is checked against nn.LSTM in FP32 on the same
weights, and the profiler says which kernels ran. FlashRNN's Triton kernel is a dense LSTM only
up to 64 units (its head size); above, it runs heads of 64 units: a block-diagonal recurrent
matrix, a different model, labelled so. FlashRNN's CUDA kernels compile at their first call;
they are tried once at the end, in a process of their own, if the time allows: what they
give, or their error, is a result. Timing, sizes and budget: _gpu_timing.py, next to this file.
"""
# snippet: timeout=900 needs=gpu exclusive
import json
import os
import signal
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, version

import torch
from torch import nn

import _gpu_timing  # the shared method of the RNN limit benchmarks, next to this file

CHILD = next((a for a in ("--cudnn-log", "--flashrnn-cuda") if a in sys.argv), None)
on_gpu = torch.cuda.is_available() if CHILD else _gpu_timing.gpu_or_exit(
    torch.cuda.is_available(), "PyTorch sees no CUDA device",
    "the fastest LSTM on a GPU is measured on a GPU only")
device = "cuda" if on_gpu else "cpu"
sync = torch.cuda.synchronize if on_gpu else (lambda: None)
gpu = _gpu_timing.torch_device() if on_gpu else None
DTYPES = {"BF16": torch.bfloat16, "FP16": torch.float16, "FP32 strict": torch.float32}
if _gpu_timing.dry_run():  # each type compiles the step: on a CPU, FP16 adds nothing to check
    del DTYPES["FP16"]
HEAD = 8 if _gpu_timing.dry_run() else 64  # FlashRNN triton_fused's largest head
# SIZES' order (_gpu_timing.py), FlashRNN's dense size third: batch 64, 256 units, then 64.
ALT_SIZES = [(64, 256, 64), (128, 256, 64), (128, 64, 64), (128, 128, 64), (128, 1024, 64)]
PATHS = ("cuDNN", "compiled loop", "FlashRNN")
torch.backends.cudnn.allow_tf32 = False  # strict FP32 where FP32 runs; no effect on 16 bits
torch.backends.cuda.matmul.allow_tf32 = False


def weights(units, dtype):
    """One LSTM's weights (nn.LSTM's layout, gates i, f, g, o), and data, in `dtype`."""
    torch.manual_seed(0)
    ref = nn.LSTM(units, units, batch_first=True).to(device)
    return ref, {k: v.detach().to(dtype) for k, v in ref.named_parameters()}


# --8<-- [start:show]
# --8<-- [start:compare]
def lstm_step(gx, h, c, w_hh_t):
    """One time step given its input projection gx: the recurrent product and the gates."""
    i, f, g, o = torch.addmm(gx, h, w_hh_t).chunk(4, dim=1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


# Compiled once for each type and grad mode (shapes dynamic); on the CPU traced only (dry run).
torch._dynamo.config.recompile_limit = 64
step = torch.compile(lstm_step, fullgraph=True, dynamic=True,
                     backend="inductor" if on_gpu else "eager")


def compiled_loop(x, p):
    """The generic loop at its best: x @ W_ih for all steps at once, then one compiled step
    per time step."""
    batch, steps, units = x.shape
    gx = torch.addmm(p["bias_ih_l0"] + p["bias_hh_l0"], x.reshape(-1, units),
                     p["weight_ih_l0"].t()).view(batch, steps, -1)
    h = c = x.new_zeros(batch, units)
    w_hh_t, out = p["weight_hh_l0"].t(), []
    for t in range(steps):
        h, c = step(gx[:, t], h, c, w_hh_t)
        out.append(h)
    return torch.stack(out, dim=1)


def flashrnn_lstm(x, p, backend):
    """FlashRNN's LSTM with the input projection done here: heads of up to HEAD units."""
    from flashrnn import flashrnn
    batch, steps, units = x.shape
    heads = max(1, units // HEAD)
    d = units // heads
    wx = torch.addmm(p["bias_ih_l0"] + p["bias_hh_l0"], x.reshape(-1, units),
                     p["weight_ih_l0"].t()).view(batch, steps, 4, heads, d)
    r = p["weight_hh_l0"].view(4, heads, d, units)  # gates, heads, out, in
    r = torch.stack([r[:, n, :, n * d:(n + 1) * d] for n in range(heads)], dim=1)
    h = flashrnn(wx, r, torch.zeros_like(p["bias_ih_l0"]).view(4, heads, d),
                 backend=backend, dtype=str(x.dtype)[6:])[0]
    return h[0].reshape(batch, steps, units)  # state 0 is h
# --8<-- [end:compare]


def make_call(cell):
    """The cell's call: its path, precision and mode."""
    dtype = DTYPES[cell["precision"]]
    ref, p = weights(cell["units"], dtype)
    x = torch.randn(cell["batch"], cell["steps"], cell["units"], device=device, dtype=dtype)
    if cell["path"] == "cuDNN":
        rnn = ref.to(dtype)
        forward = lambda: rnn(x)[0]
    elif cell["path"] == "compiled loop":
        forward = lambda: compiled_loop(x, p)
    else:
        backend = "triton_fused" if on_gpu else "vanilla"  # dry run: FlashRNN's PyTorch code
        forward = lambda: flashrnn_lstm(x, p, backend)
    params = list(ref.parameters()) + list(p.values())
    for t in params:
        t.requires_grad_(cell["mode"] == "train")
    if cell["mode"] == "inference":
        def call():
            with torch.no_grad():
                return forward()
        return call
    return lambda: forward().float().square().mean().backward()
# --8<-- [end:show]


def label(path, units):
    if path != "FlashRNN":
        return {"cuDNN": "cuDNN (nn.LSTM)", "compiled loop": "compiled step + CUDA graph"}[path]
    name = "FlashRNN " + ("triton_fused" if on_gpu else "vanilla (the dry run's stand-in)")
    heads = max(1, units // HEAD)
    return name + (f", {heads} heads of {units // heads} (block-diagonal: a different model)"
                   if heads > 1 else ", dense")


def error_vs_reference(cell):
    """‖out - ref‖ / ‖ref‖ against nn.LSTM in FP32 on the same weights and data (for heads,
    against FlashRNN's own PyTorch code in FP32: the same block-diagonal model)."""
    size = {k: cell[k] for k in ("steps", "units", "batch")}
    ref, p32 = weights(size["units"], torch.float32)
    torch.manual_seed(1)
    x = torch.randn(size["batch"], size["steps"], size["units"], device=device)
    with torch.no_grad():
        if cell["path"] == "FlashRNN" and size["units"] > HEAD:
            want = flashrnn_lstm(x, p32, "vanilla")
        else:
            want = ref(x)[0]
        dtype = DTYPES[cell["precision"]]
        p = {k: v.to(dtype) for k, v in p32.items()}
        xd = x.to(dtype)
        if cell["path"] == "cuDNN":
            got = ref.to(dtype)(xd)[0]
        elif cell["path"] == "compiled loop":
            got = compiled_loop(xd, p)
        else:
            got = flashrnn_lstm(xd, p, "triton_fused" if on_gpu else "vanilla")
    return float((got.float() - want).norm() / want.norm())


def conditions(size):
    cells = []
    for precision in DTYPES:
        for path in PATHS:
            for mode in ("inference", "train"):
                cells.append({"framework": "PyTorch", "path": path, "label":
                              label(path, size["units"]), "layer": "LSTM", "mode": mode,
                              "precision": precision, **size, "features": size["units"]})
    return cells


def time_cell(cell):
    cell.update(flops=_gpu_timing.flop_count("LSTM", cell["mode"], cell["steps"],
                                             cell["units"], cell["batch"], cell["features"]),
                dtype=str(DTYPES[cell["precision"]])[6:], tf32={"cudnn": False, "matmul": False})
    if cell["path"] == "FlashRNN" and cell["precision"] == "FP32 strict":
        cell["not_run"] = "FlashRNN's kernels have no strict FP32 (its fused CUDA kernel runs " \
                          "FP32 as TF32; triton_fused is 16-bit)"
        return cell
    try:
        call = make_call(cell)
        cell["error_vs_fp32_reference"] = error_vs_reference(cell)
        cell.update(_gpu_timing.torch_timings(call, on_gpu))
        cell.update(_gpu_timing.torch_kernels(call, on_gpu))
    except Exception as e:  # a path that fails at a size is a result, with its error
        cell["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300]}"
        return cell
    cell["kernel_check"] = cell["cudnn_rnn_op"] == (cell["path"] == "cuDNN" and on_gpu)
    if cell["path"] == "cuDNN":
        cell["expected"] = {"forward": _gpu_timing.expected_algorithm(
            "LSTM", cell["dtype"], cell["units"], cell["features"], cell["batch"], True, gpu),
            "backward": _gpu_timing.expected_algorithm(
            "LSTM", cell["dtype"], cell["units"], cell["features"], cell["batch"], False, gpu)
            if cell["mode"] == "train" else None}
    return _gpu_timing.finish_cell(cell)


def flashrnn_cuda_child():
    """--flashrnn-cuda BACKEND ANSWER: FlashRNN's CUDA backend compiled and timed at the
    centre size, BF16, forward and backward; the answer (timings or the error) as JSON."""
    backend, answer = sys.argv[sys.argv.index("--flashrnn-cuda") + 1:][:2]
    size = {"steps": 128, "units": 256, "batch": 64}
    out = {"backend": backend, **size, "precision": "BF16"}
    try:
        _, p = weights(size["units"], torch.bfloat16)
        x = torch.randn(size["batch"], size["steps"], size["units"], device=device,
                        dtype=torch.bfloat16)
        started = time.time()
        flashrnn_lstm(x, p, backend)
        out["first_call_s"] = time.time() - started  # the compilation
        with torch.no_grad():
            out["inference"] = _gpu_timing.torch_timings(
                lambda: flashrnn_lstm(x, p, backend), on_gpu, graph=False)["eager"]
        for t in p.values():
            t.requires_grad_(True)
        out["train"] = _gpu_timing.torch_timings(
            lambda: flashrnn_lstm(x, p, backend).float().square().mean().backward(), on_gpu,
            graph=False)["eager"]
    except Exception as e:
        out["error"] = f"{type(e).__name__}: {str(e).strip()[-600:]}"
    with open(answer, "w") as f:
        json.dump(out, f)


def flashrnn_cuda(left):
    """Each CUDA backend in a process of its own, within the time left: its answer, or why
    there is none."""
    results = []
    for backend in ("cuda", "cuda_fused"):
        if not on_gpu:
            results.append({"backend": backend, "not_run": "no GPU (dry run)"})
            continue
        budget = left - (time.time() - start_all) - 10
        if budget < 60:
            results.append({"backend": backend, "not_run": f"{max(budget, 0):.0f} s left of "
                            "this program's time: compiling takes minutes"})
            continue
        answer = os.path.abspath(f"flashrnn-{backend}.json")
        try:
            # a session of its own: a timed-out compile's nvcc and ninja are ended with it
            child = subprocess.Popen([sys.executable, os.path.abspath(sys.argv[0]),
                                      "--flashrnn-cuda", backend, answer],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "MAX_JOBS": "16"},
                                     start_new_session=True)
            try:
                _, stderr = child.communicate(timeout=min(budget, 240))
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.communicate()
                raise
            proc = subprocess.CompletedProcess(child.args, child.returncode, "", stderr)
            if os.path.exists(answer):
                with open(answer) as f:
                    results.append(json.load(f))
            else:
                tail = (proc.stderr.strip().splitlines() or ["no output"])[-3:]
                results.append({"backend": backend, "error": " | ".join(tail)[-600:]})
        except subprocess.TimeoutExpired:
            results.append({"backend": backend, "error": f"not done in {min(budget, 240):.0f} s "
                            "(compiling)"})
    return results


if CHILD == "--cudnn-log":
    _gpu_timing.cudnn_log_child(make_call, sync)
    sys.exit(0)
if CHILD == "--flashrnn-cuda":
    flashrnn_cuda_child()
    sys.exit(0)

start_all = time.time()
end = _gpu_timing.deadline()
sizes = _gpu_timing.size_list() if _gpu_timing.dry_run() else [
    {"steps": t, "units": h, "batch": b} for t, h, b in ALT_SIZES]
TITLE = "The fastest LSTM on this GPU: per-step time by path"


def installed(dist):
    """A package's release, or None where it is missing (a run without the carried wheels)."""
    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def notes(problem=None, cuda_backends=None, partial=False):
    return {"framework": "PyTorch", "torch": torch.__version__, "torch_cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version() if on_gpu else None,
            "flashrnn": installed("flashrnn"), "triton": installed("triton"), "gpu": gpu,
            "flashrnn_cuda": cuda_backends, "cudnn_log_problem": problem,
            **({"partial": True} if partial else {})}


cells, dropped = _gpu_timing.run_sizes(  # written after each size: a stopped run keeps them
    conditions, time_cell, sizes, reserve=20, on_size=lambda done, left: _gpu_timing.write_cells(
        "rnn_alternatives", TITLE, done, left, notes(partial=True)))
cudnn = [c for c in cells if c["path"] == "cuDNN" and "eager" in c]
algorithms, problem = _gpu_timing.logged_algorithms(
    [{k: c[k] for k in ("path", "mode", "precision", "steps", "units", "batch")}
     for c in cudnn], timeout=60)
for cell, algo in zip(cudnn, algorithms):
    cell["algorithm"] = algo
cuda_backends = flashrnn_cuda((end - start_all) if end else 600)
print(f"{'path':58} {'mode':9} {'precision':11} {'T/H/B':>12} {'µs/step':>9} {'graph':>8} "
      f"{'rel. error':>10} kernels")
for c in cells:
    size = f"{c['steps']}/{c['units']}/{c['batch']}"
    if "eager" not in c:
        print(f"{c['label']:58} {c['mode']:9} {c['precision']:11} {size:>12}  "
              f"{c.get('not_run') or c.get('error') or c.get('why')}")
        continue
    graph = f"{c['graph_us_per_step']:8.2f}" if "graph_us_per_step" in c else f"{'-':>8}"
    algo = (c.get("algorithm") or {}).get("forward")
    print(f"{c['label']:58} {c['mode']:9} {c['precision']:11} {size:>12} "
          f"{c['eager_us_per_step']:9.2f} {graph} {c['error_vs_fp32_reference']:10.1e} "
          f"{'cuDNN' if c['cudnn_rnn_op'] else 'not cuDNN'}"
          + (f" ({algo['algo']})" if algo else ""))
for b in cuda_backends:
    print(f"FlashRNN {b['backend']}: " + (
        b.get("not_run") or b.get("error") or
        f"inference {b['inference']['median'] / b['steps'] * 1000:.2f} µs/step, training "
        f"{b['train']['median'] / b['steps'] * 1000:.2f} µs/step (compiled in "
        f"{b['first_call_s']:.0f} s)"))
_gpu_timing.write_cells("rnn_alternatives", TITLE, cells, dropped,
                        notes(problem, cuda_backends))
