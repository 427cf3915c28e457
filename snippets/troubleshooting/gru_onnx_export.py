"""An nn.GRU exported to ONNX gives PyTorch's numbers only with the GRU node's attribute
linear_before_reset=1: PyTorch applies the reset gate after the recurrent matrix product, the
ONNX default (0) before it. Both exporters are checked, then the attribute is set to 0 to show
the numbers a file gets without it. ONNX's reference runtime runs each file.

Run it as it is: python gru_onnx_export.py (needs onnx and onnxscript)
"""
# snippet: timeout=180
import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator


def run(model: onnx.ModelProto) -> float:
    """Largest difference from PyTorch's output, the file run by ONNX's reference runtime."""
    (name,) = [i.name for i in model.graph.input]
    out = ReferenceEvaluator(model).run(None, {name: x.numpy()})[0]
    return float(np.abs(out.reshape(expected.shape) - expected).max())


def gru_nodes(model: onnx.ModelProto) -> list:
    """The file's GRU nodes."""
    return [n for n in model.graph.node if n.op_type == "GRU"]


# --8<-- [start:show]
import io
import warnings

import onnx
import torch

warnings.filterwarnings("ignore")  # the exporters' notices; the numbers are the point
torch.manual_seed(0)
gru = torch.nn.GRU(4, 8, batch_first=True).eval()
x = torch.randn(2, 5, 4)
with torch.no_grad():
    expected = gru(x)[0].numpy()

# run(model): the largest difference from PyTorch's output, the file run by ONNX's reference
# runtime; gru_nodes(model): its GRU nodes (both above)
for dynamo in (True, False):
    if dynamo:
        model = torch.onnx.export(gru, (x,), dynamo=True, verbose=False).model_proto
    else:
        f = io.BytesIO()
        torch.onnx.export(gru, (x,), f, dynamo=False)
        model = onnx.load_from_string(f.getvalue())
    (node,) = gru_nodes(model)
    attribute = {a.name: a.i for a in node.attribute}.get("linear_before_reset", 0)
    print(f"dynamo={dynamo}: GRU node with linear_before_reset={attribute}, "
          f"largest difference from PyTorch {run(model):.1e}")

for a in node.attribute:  # the same file, the attribute set to ONNX's default
    if a.name == "linear_before_reset":
        a.i = 0
print(f"the same file with linear_before_reset=0: largest difference {run(model):.1e}")
# --8<-- [end:show]
