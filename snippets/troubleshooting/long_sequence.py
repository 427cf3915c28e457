"""An nn.LSTM over more than 65,535 steps: on a GPU, cuDNN refuses the call; split the sequence
into pieces and carry the state from one to the next, and the result is the same as one call.

On a machine without a GPU both run on the CPU, which shows that the pieces give the same
result; on a GPU, the one-call line shows what cuDNN answers. Run it as it is:
python long_sequence.py
"""
# snippet: timeout=120
import torch

torch.set_num_threads(1)  # on a CPU, 65,536 tiny steps run faster on one thread than on several
# --8<-- [start:show]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.backends.cudnn.allow_tf32 = False  # FP32 in cuDNN too (its default on a GPU is TF32)
torch.manual_seed(0)
lstm = torch.nn.LSTM(input_size=4, hidden_size=24, num_layers=3).to(device)  # as reported
x = torch.randn(65_536, 2, 4, device=device)  # (time, batch, features): one step too many


def in_pieces(lstm, x, steps=65_535):
    """The same recurrence, at most `steps` steps per call, the state handed on."""
    outputs, state = [], None
    for piece in torch.split(x, steps, dim=0):
        out, state = lstm(piece, state)
        outputs.append(out)
    return torch.cat(outputs), state


with torch.no_grad():
    try:
        whole = lstm(x)[0]
        print(f"one call on {device}:    ok")
    except RuntimeError as err:  # on a GPU with cuDNN
        print(f"one call on {device}:    RuntimeError: {err}")
        with torch.backends.cudnn.flags(enabled=False):  # PyTorch's own CUDA kernel
            whole = lstm(x)[0]
    pieces = in_pieces(lstm, x)[0]
print(f"in pieces on {device}:   {pieces.shape[0]} steps, same as one call:",
      torch.allclose(pieces, whole, atol=1e-5))
# --8<-- [end:show]
assert torch.allclose(pieces, whole, atol=1e-5)
