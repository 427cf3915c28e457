"""Which cuDNN wheel's files an environment holds when more than one nvidia-cudnn-cu* wheel is
installed (PyTorch's wheel wants -cu13, TensorFlow's and JAX's CUDA 12 extras -cu12): both write
site-packages/nvidia/cudnn, and pip reports no conflict.

Run it as it is: python cudnn_wheels.py
"""
# snippet: timeout=120
# --8<-- [start:show]
import base64
import hashlib
import importlib.metadata as md

import torch

def on_disk_is(f):
    """Whether the installed file is the one this wheel's RECORD lists (same sha256)."""
    digest = hashlib.sha256(f.locate().read_bytes()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == f.hash.value

wheels = {d.metadata["Name"]: d for d in md.distributions()
          if (d.metadata["Name"] or "").startswith("nvidia-cudnn-cu")}
files = {name: {str(f): f for f in d.files if f.hash} for name, d in wheels.items()}
shared = set.intersection(*map(set, files.values())) if len(files) > 1 else set()
print(f"torch {torch.__version__} requires",
      [r for r in md.requires("torch") if r.startswith("nvidia-cudnn")])
print(f"cuDNN wheels installed: {sorted(wheels)}; files they share: {len(shared)}")
differ = [p for p in shared if len({files[n][p].hash.value for n in files}) > 1]
small = sorted(p for p in differ if (files[min(files)][p].size or 0) < 1_000_000)
for name in sorted(wheels):  # the small files whose content differs: headers, loader
    own = sum(on_disk_is(files[name][p]) for p in small)
    print(f"{name} {wheels[name].version}: {own} of {len(small)} checked files on disk are its own")
print("torch.backends.cudnn.version():", torch.backends.cudnn.version())
# --8<-- [end:show]
# Self-checks: the files on disk are exactly one wheel's, and PyTorch loads that one's cuDNN.
if len(wheels) > 1:
    assert small and "nvidia/cudnn/include/cudnn_version.h" in shared, sorted(shared)[:5]
    owner = [n for n in wheels if all(on_disk_is(files[n][p]) for p in small)]
    assert len(owner) == 1, owner
    if torch.backends.cudnn.is_available():
        major, minor = (int(v) for v in wheels[owner[0]].version.split(".")[:2])
        assert torch.backends.cudnn.version() == major * 10000 + minor * 100, owner
