"""PyTorch backend: what mixed_float16 and mixed_bfloat16 do to an LSTM and a GRU."""
# snippet: timeout=120
import os

os.environ["KERAS_BACKEND"] = "torch"  # Keras 3 on PyTorch; set before Keras is imported
import numpy as np

from _pretend_gpu import cuda_looking, pretend_gpu, torch_backend_rnn  # Keras's own choice, no GPU

x = np.zeros((2, 5, 3), "float32")
# --8<-- [start:show]
import keras

def keras_asks(policy, layer_class):
    """The dtype Keras hands to PyTorch's cuDNN RNN on a GPU."""
    keras.mixed_precision.set_dtype_policy(policy)
    kind = layer_class.__name__.lower()
    seen = []
    with pretend_gpu():
        recorder = getattr(torch_backend_rnn, f"_cudnn_{kind}")
        setattr(torch_backend_rnn, f"_cudnn_{kind}",
                lambda x, *a, **k: (seen.append(str(x.dtype)), recorder(x, *a, **k))[1])
        layer_class(4)(cuda_looking(x))
    return seen[0].removeprefix("torch.") if seen else "nothing (generic loop)"

results = {}
for policy in ("float32", "mixed_float16", "mixed_bfloat16"):
    results[policy] = [keras_asks(policy, L) for L in (keras.layers.LSTM, keras.layers.GRU)]
    print(f"{policy:15} Keras asks cuDNN for LSTM: {results[policy][0]:9} GRU: {results[policy][1]}")
# --8<-- [end:show]
assert results == {"float32": ["float32"] * 2, "mixed_float16": ["float16"] * 2,
                   "mixed_bfloat16": ["bfloat16"] * 2}, results
