"""Did my Keras layer run on cuDNN? Keras 3 on TensorFlow (and tf-keras): TensorFlow's profiler
lists the ops that ran during one call; cuDNN's recurrent ops are named CudnnRNN*.
Run it as it is (python ran_on_cudnn_tensorflow.py), then call ops_that_ran on yours.
"""
# snippet: timeout=240
import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# --8<-- [start:show]
import pathlib
import re
import tempfile

import keras
import numpy as np
import tensorflow as tf
from tensorflow.tsl.profiler.protobuf import xplane_pb2


def ops_that_ran(call):
    """The op types TensorFlow's profiler saw run during call()."""
    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        try:
            call()
        finally:
            tf.profiler.experimental.stop()
        (trace,) = pathlib.Path(logdir).rglob("*.xplane.pb")
        space = xplane_pb2.XSpace.FromString(trace.read_bytes())
    names = {m.name for plane in space.planes for m in plane.event_metadata.values()}
    return {m.group(1) for m in map(re.compile(r"[^\s:]+:(\w+)$").match, names) if m}


model = keras.Sequential([keras.Input((20, 8)), keras.layers.LSTM(16), keras.layers.Dense(1)])
x = np.zeros((4, 20, 8), "float32")
model(x)  # built and traced once: the call below is the one looked at
ran = ops_that_ran(lambda: model.predict(x, verbose=0))
print("GPUs TensorFlow sees:", len(tf.config.list_physical_devices("GPU")))
print("cuDNN ops that ran:", sorted(op for op in ran if op.startswith("CudnnRNN")) or "none")
# --8<-- [end:show]
assert any(op.startswith("CudnnRNN") for op in ran) == bool(tf.config.list_physical_devices("GPU"))
assert any("MatMul" in op for op in ran), sorted(ran)  # the profiler saw the call's ops
