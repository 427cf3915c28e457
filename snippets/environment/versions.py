"""Which TensorFlow and Keras you run, and what cuDNN they can use.

Run it as it is: python versions.py
"""
# snippet: timeout=120
# --8<-- [start:show]
import importlib.metadata as md

import tensorflow as tf
import keras

build = tf.sysconfig.get_build_info()  # keys are absent on builds without CUDA: use .get
gpus = tf.config.list_physical_devices("GPU")

print(f"TensorFlow           {tf.__version__}")
print(f"Keras                {keras.__version__}  (Keras {keras.__version__.split('.')[0]})")
try:
    print(f"tf-keras (Keras 2)   {md.version('tf-keras')}")
except md.PackageNotFoundError:
    print("tf-keras (Keras 2)   not installed")
print(f"CUDA build           {build.get('is_cuda_build', False)}")
print(f"built with CUDA      {build.get('cuda_version', '-')}")
print(f"built with cuDNN     {build.get('cudnn_version', '-')}")
print(f"GPUs visible         {len(gpus)}")
for gpu in gpus:
    details = tf.config.experimental.get_device_details(gpu)
    print(f"  {gpu.name}: {details.get('device_name', '?')}, "
          f"compute capability {details.get('compute_capability', '?')}")
if not gpus:
    print("No GPU visible: LSTM and GRU layers run on the CPU; cuDNN is not used.")
# --8<-- [end:show]

# Self-check: the two ways TensorFlow reports a CUDA build agree.
assert tf.test.is_built_with_cuda() == bool(build.get("is_cuda_build")), build
