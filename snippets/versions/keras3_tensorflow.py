"""Keras 3 on the TensorFlow backend: which LSTM/GRU calls reach cuDNN, asked of the installed release."""
# snippet: timeout=240 matrix
import os
import sys

os.environ["KERAS_BACKEND"] = "tensorflow"  # before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _keras3_cases  # the cases, and how a GPU is pretended on every release

_keras3_cases.report(_keras3_cases.run_all())
