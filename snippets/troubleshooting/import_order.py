"""TensorFlow 2.20+ and PyTorch's compiler (triton) in one process: the import order decides."""
# snippet: timeout=120
# --8<-- [start:show]
import os
import signal
import subprocess
import sys

env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")  # no TensorFlow start-up lines
results = {}
for order in ("import tensorflow; import triton", "import triton; import tensorflow"):
    done = subprocess.run([sys.executable, "-c", order], env=env, capture_output=True)
    if done.returncode < 0:
        results[order] = f"killed by {signal.Signals(-done.returncode).name}"
    else:
        results[order] = f"exit code {done.returncode}"
    print(f"{order:34} -> {results[order]}")
# --8<-- [end:show]
assert results == {"import tensorflow; import triton": "killed by SIGSEGV",
                   "import triton; import tensorflow": "exit code 0"}, results
