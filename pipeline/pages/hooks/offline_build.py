"""Nothing the build runs downloads: the notebooks and the snippets run offline.

The notebook loads MNIST with keras.datasets.mnist.load_data() and falls back to the subset in
data/mnist_subset.npz when the download fails (as it does for a reader without network). On a
machine with network, as GitHub's runners have, the build would download 11 MB from Google's
storage and show full MNIST instead. Every download of the build goes to a closed local port
(Python's urllib, which Keras and pip use, reads these variables), so the build shows what runs
without network, wherever it runs.
"""
from __future__ import annotations

import os

CLOSED_PORT = "http://127.0.0.1:9"
OFFLINE = {"http_proxy": CLOSED_PORT, "https_proxy": CLOSED_PORT,
           "HTTP_PROXY": CLOSED_PORT, "HTTPS_PROXY": CLOSED_PORT, "no_proxy": "", "NO_PROXY": ""}


def on_config(config):
    os.environ.update(OFFLINE)  # inherited by the notebook kernels and the snippets' processes
    return config
