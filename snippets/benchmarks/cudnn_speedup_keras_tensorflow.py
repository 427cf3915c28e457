"""Keras 3 on the TensorFlow backend: LSTM and GRU with use_cudnn="auto" (cuDNN) vs
use_cudnn=False (the generic loop), on the same GPU. The model and timing are in _speedup.py."""
# snippet: timeout=1800 needs=gpu exclusive
import os
import pathlib
import re
import tempfile

os.environ["KERAS_BACKEND"] = "tensorflow"  # this program measures one backend
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

import _speedup  # the shared half of the benchmark, next to this file

on_gpu = _speedup.use_gpu(bool(tf.config.list_physical_devices("GPU")), "TensorFlow sees no GPU")
tf.config.experimental.enable_tensor_float_32_execution(False)  # FP32 on both paths


# --8<-- [start:show]
def ops_run(step):
    """The op types TensorFlow's profiler saw run during one call of `step`."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        try:
            step()
        finally:
            tf.profiler.experimental.stop()
        (trace,) = pathlib.Path(logdir).rglob("*.xplane.pb")
        space = xplane_pb2.XSpace.FromString(trace.read_bytes())
    names = {m.name for plane in space.planes for m in plane.event_metadata.values()}
    return {m.group(1) for m in map(re.compile(r"[^\s:]+:(\w+)$").match, names) if m}


def check(layer, mode, size, cudnn_step, generic_step):
    """Before each timing, on the very calls timed (a compiled training step or inference):
    the cuDNN path runs TensorFlow's cuDNN op, the generic path does not."""
    fast, slow = ops_run(cudnn_step), ops_run(generic_step)
    auto = sorted(op for op in fast if op.startswith("CudnnRNN"))
    off = sorted(op for op in slow if op.startswith("CudnnRNN"))
    print(f"kernel check: {layer} {mode} {size}: use_cudnn='auto' ran {auto}; "
          f"use_cudnn=False ran {off}")
    assert bool(auto) == on_gpu and not off, (layer, mode, size, auto, off)
    assert any("MatMul" in op for op in slow), sorted(slow)  # the loop's products were seen
# --8<-- [end:show]

_speedup.run("Keras 3 (TensorFlow)", _speedup.keras3_paths(keras, jit_compile=False),
             _speedup.no_sync, _speedup.keras_matmul(keras),
             notes={"keras": keras.__version__, "tensorflow": tf.__version__}, check=check)
