"""How the installed JAX reads the variables that decide how much GPU memory it takes."""
# snippet: timeout=60
# --8<-- [start:show]
import os

from jaxlib import xla_client  # the code that turns the variables into GPU client options

MEMORY_VARIABLES = ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION",
                    "XLA_CLIENT_MEM_FRACTION")

def gpu_options(**variables):
    """The memory options JAX's GPU client would get with only these variables set."""
    saved = dict(os.environ)
    for name in MEMORY_VARIABLES:  # whatever this shell has set, start from none
        os.environ.pop(name, None)
    os.environ.update(variables)
    try:
        options = xla_client.generate_pjrt_gpu_plugin_options()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return {k: v for k, v in options.items() if k in ("preallocate", "memory_fraction")}

for variables in ({}, {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"},
                  {"XLA_PYTHON_CLIENT_MEM_FRACTION": ".30"}, {"XLA_CLIENT_MEM_FRACTION": ".30"},
                  {"XLA_PYTHON_CLIENT_MEM_FRACTION": ".30", "XLA_CLIENT_MEM_FRACTION": ".30"}):
    shown = " ".join(f"{k}={v}" for k, v in variables.items()) or "(none set)"
    try:
        result = gpu_options(**variables) or "{} (XLA defaults)"
    except ValueError as err:  # both names set
        result = f"ValueError: {err}"
    print(f"{shown:36} -> {result}")
# --8<-- [end:show]
assert gpu_options() == {}
assert gpu_options(XLA_PYTHON_CLIENT_PREALLOCATE="false") == {"preallocate": False}
assert gpu_options(XLA_PYTHON_CLIENT_MEM_FRACTION=".30") == {"memory_fraction": 0.3}
assert gpu_options(XLA_CLIENT_MEM_FRACTION=".30") == {"memory_fraction": 0.3}
try:
    gpu_options(XLA_PYTHON_CLIENT_MEM_FRACTION=".30", XLA_CLIENT_MEM_FRACTION=".30")
    raise AssertionError("both names set: the installed JAX no longer refuses it")
except ValueError:
    pass
