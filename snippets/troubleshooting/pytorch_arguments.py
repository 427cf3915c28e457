"""The errors and warnings PyTorch raises about the arguments of nn.LSTM, nn.GRU, nn.RNN, their
cells and the packing functions, each caused on purpose on a CPU. A tensor on PyTorch's "meta"
device stands in for a tensor on another device (on a GPU machine: cuda:0 against cpu).

Run it as it is: python pytorch_arguments.py
"""
# snippet: timeout=60
# --8<-- [start:show]
import warnings

import torch
from torch import nn
from torch.nn.utils.rnn import (PackedSequence, pack_padded_sequence, pad_packed_sequence,
                                pad_sequence)


def show(what, call):
    """Run `call`; print the first line of what it raised or warned."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            call()
            error = None
        except Exception as err:  # noqa: BLE001 - every kind is the point here
            error = f"{type(err).__name__}: {str(err).splitlines()[0]}"
    for w in said:  # the tracer's own notices left out
        if not (issubclass(w.category, torch.jit.TracerWarning) or "jit.trace" in str(w.message)):
            print(f"{what}: {w.category.__name__}: {str(w.message).splitlines()[0]}")
    print(f"{what}: {error or 'no error'}")


torch.manual_seed(0)
x = torch.randn(4, 5, 8)                       # batch 4, 5 steps, 8 features
lstm = nn.LSTM(8, 16, batch_first=True)        # one layer, one direction: states (1, 4, 16)
gru = nn.GRU(8, 16, batch_first=True)
h, c = torch.zeros(1, 4, 16), torch.zeros(1, 4, 16)

print("-- the input")
show("7 features for input_size=8", lambda: lstm(torch.randn(4, 5, 7)))
show("LSTM, 4-D input", lambda: lstm(x[None]))
show("GRU, 4-D input", lambda: gru(x[None]))
show("RNN, 4-D input", lambda: nn.RNN(8, 16)(x[None]))
show("float64 input, float32 weights", lambda: lstm(x.double()))
lengths = torch.tensor([5, 4, 3, 2])
packed = pack_padded_sequence(x, lengths, batch_first=True)
show("GRU, packed data of 3 dimensions",
     lambda: gru(PackedSequence(packed.data[:, None], packed.batch_sizes)))

print("-- the initial state")
bi = nn.LSTM(8, 16, num_layers=3, bidirectional=True, batch_first=True)
out, (hn, cn) = bi(x)
print("LSTM(8, 16, num_layers=3, bidirectional=True, batch_first=True) on", tuple(x.shape),
      "-> output", tuple(out.shape), "h_n", tuple(hn.shape), "c_n", tuple(cn.shape))
show("GRU, h0 for 2 layers", lambda: gru(x, torch.zeros(2, 4, 16)))
show("LSTM, h0 for batch 3", lambda: lstm(x, (torch.zeros(1, 3, 16), c)))
show("LSTM, c0 of 15 units", lambda: lstm(x, (h, torch.zeros(1, 4, 15))))
show("GRU, 2-D h0, batched input", lambda: gru(x, torch.zeros(4, 16)))
show("LSTM, 2-D states, batched input", lambda: lstm(x, (h[0], c[0])))
show("GRU, 3-D h0, unbatched input", lambda: gru(x[0], h[:, :1]))
show("LSTM, 3-D states, unbatched input", lambda: lstm(x[0], (h[:, :1], c[:, :1])))
show("GRU, float64 h0", lambda: gru(x, h.double()))
show("GRU, h0 transposed (not contiguous)", lambda: gru(x, torch.zeros(4, 1, 16).transpose(0, 1)))

print("-- devices")
show("weights on another device", lambda: nn.LSTM(8, 16, batch_first=True, device="meta")(x))
show("h0 on another device", lambda: gru(x, torch.zeros(1, 4, 16, device="meta")))

print("-- cells")
show("LSTMCell, 3-D input", lambda: nn.LSTMCell(8, 16)(x))
show("LSTMCell, 3-D h", lambda: nn.LSTMCell(8, 16)(x[:, 0], (h, c[0])))
show("GRUCell, 3-D input", lambda: nn.GRUCell(8, 16)(x))
show("GRUCell, 3-D h", lambda: nn.GRUCell(8, 16)(x[:, 0], h))
show("RNNCell, 3-D input", lambda: nn.RNNCell(8, 16)(x))
show("RNNCell, 3-D h", lambda: nn.RNNCell(8, 16)(x[:, 0], h))
show("GRUCell, 7 features", lambda: nn.GRUCell(8, 16)(torch.randn(4, 7)))
show("GRUCell, h for batch 2", lambda: nn.GRUCell(8, 16)(x[:, 0], torch.zeros(2, 16)))
cell = nn.RNNCell(8, 16)
cell.nonlinearity = "gelu"  # changed after construction
show("RNNCell, nonlinearity changed", lambda: cell(x[:, 0]))

print("-- packing")
show("lengths as a 2-D tensor", lambda: pack_padded_sequence(x, lengths[None], batch_first=True))
show("a length of 0", lambda: pack_padded_sequence(x, torch.tensor([5, 4, 3, 0]),
                                                   batch_first=True))
show("3 lengths for 4 rows", lambda: pack_padded_sequence(x, lengths[:3], batch_first=True))
show("total_length shorter than the longest",
     lambda: pad_packed_sequence(packed, batch_first=True, total_length=3))
show("batch_sizes on another device",
     lambda: PackedSequence(packed.data, packed.batch_sizes.to("meta")))
show("pad_sequence of a number", lambda: pad_sequence(5))
show("lengths as a list, traced", lambda: torch.jit.trace(
    lambda t: pack_padded_sequence(t, [5, 4, 3, 2], batch_first=True).data, (x,),
    check_trace=False))

print("-- the constructor")
show("dropout=1.5", lambda: nn.LSTM(8, 16, dropout=1.5))
show("dropout with one layer", lambda: nn.LSTM(8, 16, dropout=0.2))
show("bias=1", lambda: nn.LSTM(8, 16, bias=1))
show("batch_first=1", lambda: nn.LSTM(8, 16, batch_first=1))
show("input_size=8.0", lambda: nn.LSTM(8.0, 16))
show("input_size=0", lambda: nn.LSTM(0, 16))
show("hidden_size=16.0", lambda: nn.LSTM(8, 16.0))
show("hidden_size=0", lambda: nn.LSTM(8, 0))
show("num_layers=0", lambda: nn.LSTM(8, 16, num_layers=0))
show("proj_size=-1", lambda: nn.LSTM(8, 16, proj_size=-1))
show("proj_size=16", lambda: nn.LSTM(8, 16, proj_size=16))
show("GRU, proj_size=4", lambda: nn.GRU(8, 16, proj_size=4))
show("RNN, nonlinearity='gelu'", lambda: nn.RNN(8, 16, nonlinearity="gelu"))
show("RNNBase('LSTM2', ...)", lambda: nn.RNNBase("LSTM2", 8, 16))
# --8<-- [end:show]
