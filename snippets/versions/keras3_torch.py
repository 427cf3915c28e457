"""Keras 3 on the PyTorch backend: which LSTM/GRU calls reach cuDNN, asked of the installed
release; and whether the body of Keras's cuDNN function runs, on the CPU."""
# snippet: timeout=240 matrix
import os
import sys

os.environ["KERAS_BACKEND"] = "torch"  # before Keras is imported
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _keras3_cases as cases  # the cases, and how a GPU is pretended on every release
import torch


def body_runs(kind):
    """Keras's own `_cudnn_lstm`/`_cudnn_gru`, run on CPU tensors: the op it calls
    (torch._VF.lstm/gru, or nn.LSTM/GRU) is the one PyTorch sends to cuDNN on a GPU, so a bug
    in the code around that op shows here too."""
    name = f"_cudnn_{kind}"
    original = getattr(cases.rnn, name, None)
    if original is None:
        return {"calls": [], "error": None, "body": "no such function", "layer": "not asked"}
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

    saved = {n: getattr(cases.rnn, n) for n in ("_is_cuda_cudnn_available", name)}
    cases.rnn._is_cuda_cudnn_available = lambda: True
    setattr(cases.rnn, name, wrapper)
    layer = cases.L.LSTM(4) if kind == "lstm" else cases.L.GRU(4)
    try:
        layer(cases._input())
        seen["layer"] = "returns"
    except Exception as e:
        seen["layer"] = f"raises {type(e).__name__}"
    finally:
        for n, f in saved.items():
            setattr(cases.rnn, n, f)
    return {"calls": [kind] if "body" in seen else [], "error": None,
            "body": seen.get("body", "not called"), "layer": seen["layer"]}


data = cases.run_all()
for kind in ("lstm", "gru"):
    data["cases"][f"{kind}_cudnn_body"] = body_runs(kind)
    data["labels"][f"{kind}_cudnn_body"] = f"{kind.upper()}(4): Keras's cuDNN function, run"
cases.report(data)
for kind in ("lstm", "gru"):
    r = data["cases"][f"{kind}_cudnn_body"]
    print(f"  {kind.upper()}: the body of Keras's cuDNN function on the CPU: {r['body']}; "
          f"the layer call {r['layer']}")
