"""cudnn-frontend's Python package (pip install nvidia-cudnn-frontend, import cudnn):
the cuDNN version, and a convolution described as a graph.

Run it as it is: python frontend_graph.py
"""
# snippet: timeout=120
# --8<-- [start:show]
import cudnn

print(f"cudnn-frontend {cudnn.__version__}, cuDNN backend {cudnn.backend_version_string()} "
      f"({cudnn.backend_version()})")  # works without a GPU

# Describe y = conv(x, w): NCHW, 3x3 filter, padding 1. Nothing runs yet.
graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT,
                      intermediate_data_type=cudnn.data_type.FLOAT,
                      compute_data_type=cudnn.data_type.FLOAT)
x = graph.tensor(name="x", dim=[2, 3, 7, 6], stride=[126, 42, 6, 1])
w = graph.tensor(name="w", dim=[4, 3, 3, 3], stride=[27, 9, 3, 1])
y = graph.conv_fprop(image=x, weight=w, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
y.set_output(True)
print(f"y: dim {y.get_dim()}, stride {y.get_stride()}")  # inferred by the frontend

# Validating, building and running the graph need a GPU, and a handle on it.
try:
    handle = cudnn.create_handle()
except Exception as e:  # without a GPU: "cudnnHandle Create failed ..."
    print(f"create_handle(): {e}")
    handle = None
if handle is not None:
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    graph.check_support()
    graph.build_plans()
    print(f"plans built, workspace {graph.get_workspace_size()} bytes")
# --8<-- [end:show]

import json  # noqa: E402

# Self-checks: the output shape, and the graph holds one convolution node.
assert y.get_dim() == [2, 4, 7, 6] and y.get_stride() == [168, 42, 6, 1]
nodes = json.loads(str(graph))["nodes"]
assert [n["type"] for n in nodes] == ["CONV_FPROP"], nodes
assert cudnn.backend_version() >= 90000
