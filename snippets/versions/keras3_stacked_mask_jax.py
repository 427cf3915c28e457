"""Keras 3 on the JAX backend: two stacked LSTMs behind a Masking layer, asked of the installed
release: the mask the second LSTM receives, whether each takes cuDNN (a GPU pretended), and the
warning Keras prints."""
# snippet: timeout=240 matrix
import os
import sys

os.environ["KERAS_BACKEND"] = "jax"  # before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _stacked_mask  # noqa: E402,F401  the model, run and reported on import
