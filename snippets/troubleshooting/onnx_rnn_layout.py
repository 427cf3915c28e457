"""ONNX's LSTM, GRU and RNN take `layout=1` (batch first) since opset 14, and ONNX's reference
runtime runs it; ONNX Runtime's CPU kernels refuse it. The same node with layout 0 between two
Transposes gives the same numbers, and is what PyTorch's exporter writes for batch_first=True.
The states are inputs too: their batch axis must be named dynamic, or the file keeps the
export's batch size there. Run it as it is: python onnx_rnn_layout.py
"""
# snippet: timeout=120
import io
import warnings

warnings.filterwarnings("ignore")  # torch.onnx's notices about the exporter it uses
# --8<-- [start:show]
import numpy as np
import onnx
import torch
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

batch, steps, features, hidden = 2, 3, 2, 4
rng = np.random.default_rng(0)
X = rng.standard_normal((batch, steps, features)).astype(np.float32)  # batch first
W = rng.standard_normal((1, 4 * hidden, features)).astype(np.float32)
R = rng.standard_normal((1, 4 * hidden, hidden)).astype(np.float32)


def lstm_model(layout):
    nodes = [helper.make_node("LSTM", ["x", "W", "R"], ["Y", "Y_h"], hidden_size=hidden,
                              layout=layout)]
    if layout == 0:  # (batch, steps, ...) -> (steps, batch, ...) and back
        nodes = [helper.make_node("Transpose", ["X"], ["x"], perm=[1, 0, 2]),
                 nodes[0], helper.make_node("Transpose", ["Y"], ["Y_bf"], perm=[2, 0, 1, 3])]
    else:
        nodes[0].input[0] = "X"
    graph = helper.make_graph(
        nodes, f"lstm_layout_{layout}",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
         for n, a in (("X", X), ("W", W), ("R", R))],
        [helper.make_tensor_value_info("Y_bf" if layout == 0 else "Y", TensorProto.FLOAT,
                                       [batch, steps, 1, hidden])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(model)
    return model


y1 = ReferenceEvaluator(lstm_model(1)).run(None, {"X": X, "W": W, "R": R})[0]
y0 = ReferenceEvaluator(lstm_model(0)).run(None, {"X": X, "W": W, "R": R})[0]
print("layout=1 is valid ONNX, output", y1.shape, "- layout=0 between Transposes, same numbers:",
      np.allclose(y0, y1, atol=1e-6))

lstm = torch.nn.LSTM(features, hidden, batch_first=True)
f = io.BytesIO()
torch.onnx.export(lstm, (torch.from_numpy(X),), f, dynamo=False, input_names=["x"],
                  dynamic_axes={"x": {0: "batch", 1: "steps"}})
node = next(n for n in onnx.load_from_string(f.getvalue()).graph.node if n.op_type == "LSTM")
layout = next((helper.get_attribute_value(a) for a in node.attribute if a.name == "layout"), 0)
print("torch.onnx.export(dynamo=False), batch_first=True: the LSTM node's layout is", layout)


class Model(torch.nn.Module):  # the state is an input, as in microsoft/onnxruntime#19270
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(features, hidden)

    def forward(self, input_data, hidden_state):
        return self.gru(input_data, hidden_state)


def input_shapes(dynamic_axes):
    f = io.BytesIO()
    torch.onnx.export(Model(), (torch.randn(steps, 1, features), torch.zeros(1, 1, hidden)), f,
                      dynamo=False, input_names=["input_data", "hidden_state"],
                      dynamic_axes=dynamic_axes)
    return {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
            for i in onnx.load_from_string(f.getvalue()).graph.input}


print("only the input's batch named:", input_shapes({"input_data": {1: "batch"}}))
print("the state's batch named too: ", input_shapes({"input_data": {1: "batch"},
                                                     "hidden_state": {1: "batch"}}))
# --8<-- [end:show]
