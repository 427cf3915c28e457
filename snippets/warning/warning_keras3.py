"""Keras 3 has no cuDNN warning on any backend: search its RNN code for one."""
# snippet: timeout=120
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# --8<-- [start:show]
import pathlib

import keras

src = pathlib.Path(keras.__file__).parent / "src"
files = list((src / "layers" / "rnn").glob("*.py")) + [
    src / f"backend/{backend}/rnn.py" for backend in ("tensorflow", "jax", "torch")]
hits = [f.name for f in files if "meet the criteria" in f.read_text()
        or "will not use cuDNN" in f.read_text()]
print(f"Keras {keras.__version__}: searched {len(files)} files, warning text found in: {hits}")
# --8<-- [end:show]
assert len(files) > 5 and hits == [], hits
print("Keras 3 prints no warning: an LSTM that cannot use cuDNN falls back silently.")
