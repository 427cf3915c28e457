"""PyTorch: what the installed release does with nn.LSTM that a CPU can show: torch.compile's
graph break and allow_rnn, weight flattening, and the dtypes nn.LSTM accepts."""
# snippet: timeout=240 matrix
import json
import os

import torch
import torch._dynamo as dynamo
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj, self.rnn, self.head = nn.Linear(3, 3), nn.LSTM(3, 4), nn.Linear(4, 1)

    def forward(self, x):
        h = torch.tanh(self.proj(x))
        y, _ = self.rnn(h)
        return self.head(torch.relu(y[-1]))


def compiled_graphs(model, x, allow_rnn, fullgraph=False):
    """The operations in each graph torch.compile hands to its compiler, or the error."""
    graphs = []

    def record(gm, example_inputs):  # a compiler that only records, then runs the graph
        graphs.append(sorted({getattr(n.target, "__name__", str(n.target))
                              for n in gm.graph.nodes if n.op == "call_function"}))
        return gm.forward
    dynamo.reset()
    settings = {"allow_rnn": allow_rnn} if hasattr(dynamo.config, "allow_rnn") else {}
    with dynamo.config.patch(**settings):
        try:
            torch.compile(model, backend=record, fullgraph=fullgraph)(x)
        except Exception as err:
            return f"{type(err).__name__}: {str(err).splitlines()[0][:160]}"
    return graphs


def buffers(rnn):
    """How many separate memory buffers hold the RNN's weights."""
    return len({w.untyped_storage().data_ptr() for w in rnn._flat_weights})


def accepts(dtype):
    try:
        nn.LSTM(3, 4).to(dtype)(torch.randn(5, 2, 3, dtype=dtype))
        return "runs on the CPU"
    except Exception as err:
        return f"{type(err).__name__}: {str(err).splitlines()[0][:120]}"


torch.manual_seed(0)
model, x = Model(), torch.randn(5, 2, 3)
lstm = nn.LSTM(3, 4, num_layers=2)
before = buffers(lstm)
lstm.flatten_parameters()
data = {
    "torch": torch.__version__,
    "cases": {
        "cuda_build": torch.version.cuda or "none (a CPU build)",
        "cudnn_version": torch.backends.cudnn.version() if torch.backends.cudnn.is_available()
        else "none",
        "flatten_for_cudnn": torch._use_cudnn_rnn_flatten_weight(),
        "allow_rnn_default": getattr(dynamo.config, "allow_rnn", "no such setting"),
        "compile_default": compiled_graphs(model, x, allow_rnn=False),
        "compile_fullgraph": compiled_graphs(model, x, allow_rnn=False, fullgraph=True),
        "compile_allow_rnn": compiled_graphs(model, x, allow_rnn=True),
        "weight_buffers": before,
        "weight_buffers_after_flatten_on_cpu": buffers(lstm),
        "dtype_float16": accepts(torch.float16),
        "dtype_bfloat16": accepts(torch.bfloat16),
        "dtype_float64": accepts(torch.float64),
    },
}
print(f"torch {torch.__version__}")
for key, value in data["cases"].items():
    print(f"  {key:38} {value}")
folder = os.environ.get("SNIPPET_DATA_DIR")
if folder:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "rules.json"), "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
