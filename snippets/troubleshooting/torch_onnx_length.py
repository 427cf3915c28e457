"""ONNX export of nn.LSTM with PyTorch's current exporter (torch.onnx.export(..., dynamo=True),
the default since PyTorch 2.9): the sequence length it bakes in, how to keep it free, and what
goes wrong when a process has already exported an LSTM with a fixed length.

Each exported file is run with ONNX's own reference runtime (onnx.reference) at another length,
and compared with the PyTorch module. Run it as it is: python torch_onnx_length.py
"""
# snippet: timeout=180
import contextlib
import io
import logging
import os
import tempfile
import warnings

# The exporters log and warn as they go (progress lines, the legacy exporter's deprecation):
# keep the output to what the snippet prints.
logging.getLogger("torch.onnx").setLevel(logging.ERROR)
logging.getLogger("torch.export").setLevel(logging.ERROR)
logging.getLogger("torch._export").setLevel(logging.ERROR)
warnings.filterwarnings("ignore")
os.chdir(tempfile.mkdtemp())
# --8<-- [start:show]
import numpy as np
import onnx
import torch
from onnx.reference import ReferenceEvaluator  # ONNX's own runtime, in Python
from torch.export import Dim

torch.manual_seed(0)
x = torch.randn(2, 5, 3)  # batch of 2, 5 steps, 3 features (batch_first=True)


def export(lstm, path, **kwargs):
    """Export with the current exporter; return the file and its input's shape."""
    with contextlib.redirect_stdout(io.StringIO()):  # its progress lines
        torch.onnx.export(lstm, (x,), path, **kwargs)
    model = onnx.load(path)
    shape = [d.dim_param or d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    return model, shape


def run_at(model, lstm, steps):
    """Run the exported file at another length and compare with PyTorch."""
    x2 = torch.randn(2, steps, 3)
    try:
        got = ReferenceEvaluator(model).run(None, {model.graph.input[0].name: x2.numpy()})[0]
    except Exception as err:
        return f"fails ({type(err).__name__})"
    same = np.allclose(got, lstm(x2)[0].detach().numpy(), atol=1e-5)
    return "same as PyTorch" if same else "differs from PyTorch"


def show(label, lstm, path, **kwargs):
    try:
        model, shape = export(lstm, path, **kwargs)
        print(f"{label:44} input {shape}, at 9 steps: {run_at(model, lstm, 9)}")
        return shape
    except Exception as err:
        reason = next(line for line in str(err).splitlines() if "Dim.DYNAMIC" in line)
        print(f"{label:44} export fails: {reason.lstrip('- ')}")
        return reason


def first_lines(err):
    """torch.export's first line and its reason, without the advice after it."""
    head, reason = str(err).splitlines()[:2]
    return head.split(" For more")[0] + " " + reason.strip(" -").split(". If")[0] + "."


# 1. The time axis declared dynamic: the first LSTM export in this process.
lstm = torch.nn.LSTM(3, 4, batch_first=True).eval()
free = {"input": {1: Dim.DYNAMIC}}  # "input" is the name of nn.LSTM.forward's argument
first = show("dynamo=True, dynamic_shapes", lstm, "a.onnx", dynamo=True, dynamic_shapes=free)

# 2. Nothing declared: the example's 5 steps are baked into the file.
fixed = show("dynamo=True, no dynamic_shapes", lstm, "b.onnx", dynamo=True)

# 3. The export of step 1 again, now that this process has exported an LSTM with a fixed length.
another = torch.nn.LSTM(3, 4, batch_first=True).eval()
again = show("dynamo=True, dynamic_shapes, after step 2", another, "c.onnx",
             dynamo=True, dynamic_shapes=free)
named = show("  the same with Dim('T') instead", another, "d.onnx",
             dynamo=True, dynamic_shapes={"input": {1: Dim("T")}})

# 4. The older TorchScript exporter, with dynamic_axes.
legacy = show("dynamo=False, dynamic_axes", lstm, "e.onnx", dynamo=False,
              input_names=["x"], dynamic_axes={"x": {1: "steps"}})

# 5. torch.export alone (what ExecuTorch and LiteRT start from), a dynamic time axis.
try:
    torch.export.export(lstm, (x,), dynamic_shapes={"input": {1: Dim("T")}})
    exported = "exports"
except Exception as err:  # torch._dynamo.exc.UserError
    exported = first_lines(err)
print(f"{'torch.export.export, Dim(T)':44} {exported}")
# --8<-- [end:show]
# Self-checks: what the troubleshooting page says of PyTorch 2.14.1.
assert first[1] != 5 and isinstance(first[1], str), first
assert fixed == [2, 5, 3], fixed
assert ("but tracing inferred a static shape of 5 for dimension inputs['input'].shape[1]"
        in again), again
assert named == [2, 5, 3], named   # exported without an error, with the length fixed
assert legacy == [2, "steps", 3], legacy
assert "Constraints violated (T)!" in exported and "specialized it to be a constant (5)" in exported
