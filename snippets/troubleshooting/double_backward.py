"""A second derivative through nn.LSTM (a gradient penalty, a Hessian-vector product, MAML,
TRPO): cuDNN's RNN has no backward of its backward, so on a GPU PyTorch refuses it unless the
forward pass ran without cuDNN. On a machine without a GPU it runs on the CPU, where both ways
work. Run it as it is: python double_backward.py
"""
# snippet: timeout=60
# --8<-- [start:show]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
lstm = torch.nn.LSTM(3, 8, batch_first=True).to(device)
x = torch.randn(4, 5, 3, device=device, requires_grad=True)


def gradient_penalty():
    out, _ = lstm(x)
    (grad,) = torch.autograd.grad(out.sum(), x, create_graph=True)  # first derivative
    penalty = grad.pow(2).sum()
    penalty.backward()  # the second derivative: through the LSTM's backward
    return penalty.item()


try:
    print(f"on {device}, default:         penalty {gradient_penalty():.4f}")
except RuntimeError as err:  # NotImplementedError is a RuntimeError
    print(f"on {device}, default:         {type(err).__name__}: {str(err).splitlines()[0]}")

with torch.backends.cudnn.flags(enabled=False):  # the forward pass without cuDNN
    print(f"on {device}, cuDNN disabled:  penalty {gradient_penalty():.4f}")
# --8<-- [end:show]
