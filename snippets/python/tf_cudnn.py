"""What TensorFlow says about CUDA and cuDNN: how it was built, what it can see, and which
NVIDIA wheels `pip install tensorflow[and-cuda]` adds.

Run it as it is: python tf_cudnn.py
"""
# snippet: timeout=180
# --8<-- [start:show]
import importlib.metadata as md

import tensorflow as tf

build = tf.sysconfig.get_build_info()  # on a CPU-only build these keys are absent: use .get
gpus = tf.config.list_physical_devices("GPU")
print(f"TensorFlow {tf.__version__}")
print(f"is_cuda_build  {build.get('is_cuda_build', False)}")
print(f"cuda_version   {build.get('cuda_version', 'absent')}")
print(f"cudnn_version  {build.get('cudnn_version', 'absent')}")
print(f"GPUs visible   {len(gpus)}")

# The [and-cuda] extra is a list of NVIDIA wheels with version ranges, read from the
# installed package's metadata.
extra = [r.split(";")[0] for r in md.requires("tensorflow") or [] if 'extra == "and-cuda"' in r]
for req in extra:
    if "cudnn" in req or "cuda-runtime" in req:
        print(f"[and-cuda] needs {req}")
for name in ("nvidia-cudnn-cu12", "nvidia-cuda-runtime-cu12"):
    try:
        print(f"installed      {name} {md.version(name)}")
    except md.PackageNotFoundError:
        print(f"installed      {name}: no")
# --8<-- [end:show]

# Self-checks: what the page says about this output.
assert tf.test.is_built_with_cuda() == bool(build.get("is_cuda_build"))
if build.get("is_cuda_build"):
    assert "cudnn_version" in build and "cuda_version" in build, build
assert any(r.startswith("nvidia-cudnn-cu12") for r in extra), extra
if not gpus:
    print("No GPU: TensorFlow runs every LSTM on the CPU and never calls cuDNN.")
