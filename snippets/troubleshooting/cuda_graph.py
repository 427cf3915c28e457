"""On a GPU: can a cuDNN LSTM be captured in a CUDA graph and replayed, for inference and for
forward and backward? Each replay is compared with the same
computation run eagerly. Run it as it is: python cuda_graph.py

BENCH_CPU_DRY_RUN=1 runs the eager half on the CPU to check the code (the tests do); CUDA graphs
exist on a GPU only.
"""
# snippet: timeout=180 needs=gpu
import os
import sys

import torch

DRY_RUN = os.environ.get("BENCH_CPU_DRY_RUN") == "1"
if not torch.cuda.is_available() and not DRY_RUN:
    print("needs a GPU: PyTorch sees no CUDA device; CUDA graphs exist on a GPU only.")
    sys.exit(77)
device = "cpu" if DRY_RUN else "cuda"
print(f"PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, on {device}")
# --8<-- [start:show]
from torch import nn


def make(layer_type):
    torch.manual_seed(0)
    return getattr(nn, layer_type)(64, 128, num_layers=2, batch_first=True).to(device)


def forward_backward(rnn, x):
    rnn.zero_grad(set_to_none=False)  # gradients stay in place: the graph reuses their memory
    loss = rnn(x)[0].pow(2).mean()
    loss.backward()
    return loss


def captured(fn, static_x, x):
    """fn(static_x) captured in a CUDA graph (after warm-up on a side stream, as PyTorch's
    documentation asks), then replayed with x copied into static_x."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = fn(static_x)
    static_x.copy_(x)
    graph.replay()
    return static_out


for layer_type in ("LSTM", "GRU"):
    x = torch.randn(8, 30, 64, device=device)
    for mode in ("inference", "forward and backward"):
        eager, graphed = make(layer_type), make(layer_type)
        if mode == "inference":
            eager.eval(), graphed.eval()
            with torch.no_grad():
                expected = eager(x)[0]
            run = lambda inp: graphed(inp)[0]
        else:
            expected = forward_backward(eager, x)
            run = lambda inp: forward_backward(graphed, inp)
        if DRY_RUN:
            print(f"{layer_type} {mode}: eager ran on the CPU (no CUDA graph there)")
            continue
        try:
            with torch.no_grad() if mode == "inference" else torch.enable_grad():
                got = captured(run, torch.zeros_like(x), x)
            torch.cuda.synchronize()
            same = torch.allclose(got, expected, atol=1e-5)
            if mode != "inference":  # and the gradients the replay left in place
                same = same and torch.allclose(graphed.weight_hh_l0.grad,
                                               eager.weight_hh_l0.grad, atol=1e-5)
            print(f"{layer_type} {mode:20}: captured and replayed; same as eager: {same}")
        except RuntimeError as err:
            print(f"{layer_type} {mode:20}: RuntimeError: {str(err).splitlines()[0]}")
            torch.cuda.synchronize()
# --8<-- [end:show]
