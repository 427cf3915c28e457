"""Keras 3 on the PyTorch backend: which LSTM/GRU calls reach cuDNN, asked of the installed
release; whether the body of Keras's cuDNN function runs, on the CPU; and what a layer with
use_cudnn=True does (and what the checker says of it)."""
# snippet: timeout=240 matrix
import os
import re
import sys

os.environ["KERAS_BACKEND"] = "torch"  # before Keras is imported
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _keras3_cases as cases  # the cases, and how a GPU is pretended on every release
import torch


def body_runs(kind):
    """Keras's own `_cudnn_lstm`/`_cudnn_gru`, run on CPU tensors: the op it calls
    (torch._VF.lstm/gru, or nn.LSTM/GRU) is the one PyTorch sends to cuDNN on a GPU, so a bug
    in the code around that op shows here too. Then the same layer with use_cudnn=True: what it
    does (Keras raises a ValueError where its cuDNN path fails), and what the checker says."""
    name = f"_cudnn_{kind}"
    original = getattr(cases.rnn, name, None)
    seen = {}

    def on_cpu(value):
        if isinstance(value, torch.Tensor):
            return value.as_subclass(torch.Tensor)
        if isinstance(value, torch.device) or value in ("cuda", "cuda:0"):
            return torch.device("cpu")
        return value

    def wrapper(*args, **kwargs):
        try:
            out = original(*map(on_cpu, args), **{k: on_cpu(v) for k, v in kwargs.items()})
        except Exception as e:
            seen["body"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
            raise
        seen["body"] = "runs"
        return out

    def call(layer) -> str:
        try:
            layer(cases._input())
            return "returns"
        except Exception as e:
            text = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", str(e)).split())  # Keras colours its text
            return f"raises {type(e).__name__}: {text[:400]}"

    saved = {n: getattr(cases.rnn, n) for n in ("_is_cuda_cudnn_available", name)
             if hasattr(cases.rnn, n)}
    cases.rnn._is_cuda_cudnn_available = lambda: True
    if original is not None:
        setattr(cases.rnn, name, wrapper)
    make = cases.L.LSTM if kind == "lstm" else cases.L.GRU
    try:
        result = {"layer": call(make(4)).split(":")[0] if original is not None else "not asked"}
        try:
            strict = make(4, use_cudnn=True)
        except (TypeError, ValueError):  # no use_cudnn argument before Keras 3.2
            strict = None
        if strict is not None:
            result["use_cudnn_true"] = call(strict)
            result["checker_use_cudnn_true"] = [f.message for f in cases.cudnn_check.check_layer(strict)]
    finally:
        for n in ("_is_cuda_cudnn_available", name):
            if n in saved:
                setattr(cases.rnn, n, saved[n])
            elif n == "_is_cuda_cudnn_available":
                delattr(cases.rnn, n)
    body = "no such function" if original is None else seen.get("body", "not called")
    return {"calls": [kind] if "body" in seen else [], "error": None, "body": body, **result}


data = cases.run_all()
for kind in ("lstm", "gru"):
    data["cases"][f"{kind}_cudnn_body"] = body_runs(kind)
    data["labels"][f"{kind}_cudnn_body"] = f"{kind.upper()}(4): Keras's cuDNN function, run"
cases.report(data)
for kind in ("lstm", "gru"):
    r = data["cases"][f"{kind}_cudnn_body"]
    print(f"  {kind.upper()}: the body of Keras's cuDNN function on the CPU: {r['body']}; "
          f"the layer call {r['layer']}")
