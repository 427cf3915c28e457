"""Which cuDNN, CUDA runtime and CUDA driver library this process actually loaded, and from
which folder: the files mapped into the process once PyTorch has started, and what the loaded
cuDNN says of itself. In a container or on WSL2, the folder tells the image's or the wheel's
cuDNN apart from a system one, and shows where the driver's libcuda comes from.

Run it as it is: python loaded_cudnn.py
"""
# snippet: timeout=120
# --8<-- [start:show]
import ctypes
import os
import sysconfig

import torch

# Both calls load what they need: cuDNN for the first, the driver's libcuda for the second.
print(f"torch {torch.__version__}: cudnn.version() {torch.backends.cudnn.version()}, "
      f"GPU {torch.cuda.is_available()}")

def mapped(names):
    """The files of this process (Linux: /proc/self/maps) whose name starts with one of names."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if line.rstrip().endswith(".so") or ".so." in line}
    return sorted(p for p in paths if os.path.basename(p).startswith(names))

site = os.path.realpath(sysconfig.get_paths()["purelib"])  # shown as site-packages
for path in mapped(("libcudnn", "libcudart", "libcuda.")):
    print("loaded", path.replace(site, "site-packages"))
if not mapped(("libcuda.",)):
    print("libcuda (the NVIDIA driver's library) is not loaded: no driver in reach")

cudnn_files = mapped(("libcudnn.so",))
if cudnn_files:  # ask the loaded file itself, as a C program would
    lib = ctypes.CDLL(cudnn_files[0])
    lib.cudnnGetVersion.restype = lib.cudnnGetCudartVersion.restype = ctypes.c_size_t
    print(f"that libcudnn: cudnnGetVersion() {lib.cudnnGetVersion()}, "
          f"built for CUDA runtime {lib.cudnnGetCudartVersion()}")
# --8<-- [end:show]

# Self-checks: PyTorch's answer is the loaded file's own, and that file is the one on disk.
if torch.backends.cudnn.is_available():
    assert len(cudnn_files) == 1 and os.path.isfile(cudnn_files[0]), cudnn_files
    assert lib.cudnnGetVersion() == torch.backends.cudnn.version(), lib.cudnnGetVersion()
    assert str(lib.cudnnGetCudartVersion())[:2] in {f"{m}" for m in (11, 12, 13)}
if torch.cuda.is_available():  # a GPU in use means the driver's library is in the process
    assert mapped(("libcuda.",)), "GPU available but no libcuda mapped"
