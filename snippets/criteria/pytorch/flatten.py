"""PyTorch: cuDNN wants an RNN's weights in one buffer; flatten_parameters() does that on a GPU only."""
# snippet: timeout=120
# --8<-- [start:show]
import torch
from torch import nn

def buffers(rnn):
    """How many separate memory buffers hold the RNN's weights."""
    return len({w.untyped_storage().data_ptr() for w in rnn._flat_weights})

lstm = nn.LSTM(3, 4, num_layers=2)
print("weight tensors:", len(lstm._flat_weights), " buffers:", buffers(lstm))
lstm.flatten_parameters()  # a no-op unless the weights are CUDA tensors cuDNN accepts
print("after flatten_parameters() on the CPU: buffers:", buffers(lstm))
print("PyTorch can flatten for cuDNN here:", torch._use_cudnn_rnn_flatten_weight())
# --8<-- [end:show]
assert buffers(lstm) == len(lstm._flat_weights) == 8
if torch.cuda.is_available() and torch.backends.cudnn.is_available():
    on_gpu = nn.LSTM(3, 4, num_layers=2).cuda()  # .cuda() flattens the weights into one buffer
    assert buffers(on_gpu) == 1, buffers(on_gpu)
    print("on the GPU after .cuda(): buffers:", buffers(on_gpu))
