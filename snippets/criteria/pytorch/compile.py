"""torch.compile and nn.LSTM: where the graph breaks, what allow_rnn changes, and what the
default compiler does with an LSTM it is allowed to trace."""
# snippet: timeout=120
# --8<-- [start:show]
import torch
import torch._dynamo as dynamo
from torch import nn
from torch._inductor.decomposition import select_decomp_table  # what inductor rewrites

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj, self.rnn, self.head = nn.Linear(3, 3), nn.LSTM(3, 4), nn.Linear(4, 1)

    def forward(self, x):
        h = torch.tanh(self.proj(x))
        y, _ = self.rnn(h)
        return self.head(torch.relu(y[-1]))

def compiled_graphs(allow_rnn, fullgraph=False):
    """The operations in each graph torch.compile hands to its compiler."""
    graphs = []
    def record(gm, example_inputs):  # a compiler that only records, then runs the graph
        graphs.append(sorted({getattr(n.target, "__name__", str(n.target))
                              for n in gm.graph.nodes if n.op == "call_function"}))
        return gm.forward
    dynamo.reset()
    with dynamo.config.patch(allow_rnn=allow_rnn):
        try:
            out = torch.compile(model, backend=record, fullgraph=fullgraph)(x)
        except dynamo.exc.Unsupported as err:
            return f"Unsupported: {str(err).splitlines()[0]}"
    torch.testing.assert_close(out, model(x))  # same result as eager
    return graphs

model, x = Model(), torch.randn(5, 2, 3)
print(f"torch {torch.__version__}, allow_rnn = {dynamo.config.allow_rnn} by default")
print("default:            ", compiled_graphs(allow_rnn=False))
print("fullgraph=True:     ", compiled_graphs(allow_rnn=False, fullgraph=True))
print("allow_rnn=True:     ", compiled_graphs(allow_rnn=True))
print("inductor rewrites aten.lstm into smaller ops:",
      torch.ops.aten.lstm.input in select_decomp_table())
# --8<-- [end:show]
assert dynamo.config.allow_rnn is False
assert compiled_graphs(False) == [["linear", "tanh"]]  # the LSTM and all after it: eager
assert compiled_graphs(False, True).startswith("Unsupported: Attempted to wrap RNN, GRU, or LSTM")
assert any("lstm" in g for g in compiled_graphs(True))
