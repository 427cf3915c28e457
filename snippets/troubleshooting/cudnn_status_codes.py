"""Every cuDNN status code of the installed cuDNN: read from its header, cudnn_graph.h, and named
by the library itself (cudnnGetErrorString, the function PyTorch and TensorFlow call to write
"CUDNN_STATUS_..." in their errors). Needs no GPU: the cuDNN wheel from pip is enough.

Run it as it is: python cudnn_status_codes.py
"""
# snippet: timeout=60
# --8<-- [start:show]
import ctypes
import re
from pathlib import Path

import nvidia.cudnn  # the nvidia-cudnn-cu12 (or -cu13) wheel

folder = Path(list(nvidia.cudnn.__path__)[0])
header = (folder / "include" / "cudnn_graph.h").read_text()
library = ctypes.CDLL(str(folder / "lib" / "libcudnn_graph.so.9"))
library.cudnnGetErrorString.restype = ctypes.c_char_p
library.cudnnGetVersion.restype = ctypes.c_size_t

# typedef enum { NAME = VALUE, /**< description @since cuDNN x */ ... } cudnnStatus_t;
body = re.search(r"typedef enum\s*\{(.*?)\}\s*cudnnStatus_t\s*;", header, re.S).group(1)
entry = re.compile(r"(CUDNN_STATUS_\w+)(\s+CUDNN_DEPRECATED_ENUM)?\s*=\s*(\w+)\s*"
                   r"(?:/\*(?!\*<).*?\*/\s*)?,?\s*/\*\*<\s*(.*?)\s*\*/", re.S)
values, rows, old = {}, [], []
for name, deprecated, value, doc in entry.findall(body):
    values[name] = int(value) if value.isdigit() else values[value]
    described = re.sub(r"\s*@since cuDNN [\d.]+", "", " ".join(doc.split()))
    (old if deprecated else rows).append((name, values[name], described))

version = library.cudnnGetVersion()
print(f"cuDNN {version // 10000}.{version // 100 % 100}.{version % 100}: "
      f"{len(rows)} status codes and {len(old)} deprecated names in cudnn_graph.h")
print(f"{'value':>5}  {'cudnnGetErrorString(value)':<56}  the header's description")
for name, value, described in rows:
    said = library.cudnnGetErrorString(value).decode()
    assert said == name, (name, said)  # the library names each value as its header does
    print(f"{value:>5}  {said:<56}  {described}")
print("deprecated names, and what cudnnGetErrorString says for their value:")
for name, value, described in old:
    print(f"{value:>5}  {name:<56}  {library.cudnnGetErrorString(value).decode()}")
print("a value the header does not define:", library.cudnnGetErrorString(6000).decode())
# --8<-- [end:show]
