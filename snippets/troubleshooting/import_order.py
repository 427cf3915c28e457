"""TensorFlow 2.20+ and PyTorch's compiler (triton) in one process: the import order decides,
and the first torch.optim optimizer loads triton too."""
# snippet: timeout=120
# --8<-- [start:show]
import os
import signal
import subprocess
import sys

env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")  # no TensorFlow start-up lines
results = {}
OPTIMIZER = "torch.optim.Adam([torch.zeros(1, requires_grad=True)])"  # loads triton
for order in (f"import tensorflow; import torch; {OPTIMIZER}",
              f"import triton; import tensorflow; import torch; {OPTIMIZER}"):
    done = subprocess.run([sys.executable, "-c", order], env=env, capture_output=True)
    if done.returncode < 0:
        results[order] = f"killed by {signal.Signals(-done.returncode).name}"
    else:
        results[order] = f"exit code {done.returncode}"
    print(f"{order}\n    -> {results[order]}")
# --8<-- [end:show]
assert list(results.values()) == ["killed by SIGSEGV", "exit code 0"], results
