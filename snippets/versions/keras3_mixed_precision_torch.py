"""Keras 3 on the PyTorch backend: an LSTM and a GRU under the float32, mixed_float16 and
mixed_bfloat16 dtype policies, asked of the installed release: whether Keras still chooses cuDNN
(a GPU pretended) and the dtypes it hands to it."""
# snippet: timeout=240 matrix
import os
import sys

os.environ["KERAS_BACKEND"] = "torch"  # before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _mixed_precision  # noqa: E402  the cases, built on how _keras3_cases.py pretends a GPU

_mixed_precision.report_policies(_mixed_precision.run_policies())
