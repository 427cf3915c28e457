"""tf-keras on TensorFlow's ROCm build (AMD GPUs, MIOpen behind the same recurrent ops): which
masks still reach the fused kernel. Asked of tf-keras's own check, with TensorFlow's build
information saying ROCm (the TensorFlow installed here is not a ROCm build).
Run it as it is: python rocm_keras_mask.py
"""
# snippet: timeout=180
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# --8<-- [start:show]
from unittest import mock

import tensorflow as tf
from tf_keras.src.layers.rnn import gru_lstm_utils  # where tf-keras decides

masks = {"no padding": [[True, True, True], [True, True, True]],
         "right-padded": [[True, True, False], [True, True, True]]}


def reaches_the_fused_kernel(mask, rocm):
    """tf-keras's own answer, on a build that says it is (or is not) ROCm."""
    sysconfig = gru_lstm_utils.tf.sysconfig  # the TensorFlow API tf-keras reads it from
    build = dict(sysconfig.get_build_info(), is_rocm_build=rocm)
    with mock.patch.object(sysconfig, "get_build_info", return_value=build):
        return bool(gru_lstm_utils.is_cudnn_supported_inputs(
            tf.constant(mask), time_major=False, sequence_lengths=None))


for name, mask in masks.items():
    print(f"tf-keras, {name:12}  CUDA build: {reaches_the_fused_kernel(mask, False)!s:5}  "
          f"ROCm build: {reaches_the_fused_kernel(mask, True)}")
# --8<-- [end:show]
assert reaches_the_fused_kernel(masks["right-padded"], rocm=False)
assert not reaches_the_fused_kernel(masks["right-padded"], rocm=True)
assert reaches_the_fused_kernel(masks["no padding"], rocm=True)
