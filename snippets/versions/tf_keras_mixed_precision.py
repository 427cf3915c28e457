"""tf-keras (Keras 2): an LSTM and a GRU under the float32, mixed_float16 and mixed_bfloat16
dtype policies, asked of the installed release: the cuDNN op tf-keras puts in the graph and its
dtype, and the dtypes the installed TensorFlow registers GPU kernels of its cuDNN RNN ops for."""
# snippet: timeout=240 matrix
import json
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # Keras 2: must be set before TensorFlow is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import tf_keras
from tensorflow.python.framework import kernels  # TensorFlow's kernel registry

X = tf.zeros((2, 5, 3))
KINDS = {"lstm": "LSTM", "gru": "GRU"}


def cudnn_ops(layer):
    """The cuDNN ops, with their dtype, anywhere in the graph tf.function traces for this call:
    tf-keras puts the cuDNN candidate in the graph and TensorFlow picks it on a GPU at run time."""
    graph = tf.function(layer).get_concrete_function(X).graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    return sorted({f"{n.op} {tf.as_dtype(n.attr['T'].type).name}" for n in nodes
                   if n.op.startswith("CudnnRNN") and "T" in n.attr})


cases, labels = {}, {}
for kind, name in KINDS.items():
    for policy in ("float32", "mixed_float16", "mixed_bfloat16"):
        case = f"{kind}_{policy}"
        labels[case] = f"{name}(4), {policy}"
        tf_keras.mixed_precision.set_global_policy(policy)
        try:
            layer = getattr(tf_keras.layers, name)(4)
            ops = cudnn_ops(layer)
            cases[case] = {"calls": ops, "error": None,
                           "could_use_gpu_kernel": bool(layer._could_use_gpu_kernel),
                           "variables": sorted({v.dtype.name for v in layer.weights})}
        except Exception as e:  # a dtype the op does not take, say
            cases[case] = {"calls": [], "error": f"{type(e).__name__}: "
                                                 f"{str(e).splitlines()[0][:200]}"}
        finally:
            tf_keras.mixed_precision.set_global_policy("float32")
        r = cases[case]
        print(f"{labels[case]:23} " + (r["error"] or f"_could_use_gpu_kernel="
                                       f"{r['could_use_gpu_kernel']!s:5} graph: {ops}"))

gpu_kernels = {op: sorted(tf.as_dtype(t).name for k in kernels.get_registered_kernels_for_op(op).kernel
                          if k.device_type == "GPU" for c in k.constraint if c.name == "T"
                          for t in c.allowed_values.list.type)
               for op in ("CudnnRNN", "CudnnRNNV3")}
print(f"tf-keras {tf_keras.__version__}, TensorFlow {tf.__version__}")
for op, dtypes in gpu_kernels.items():
    print(f"TensorFlow {tf.__version__}: GPU kernels of {op} for {', '.join(dtypes)}")

folder = os.environ.get("SNIPPET_DATA_DIR")
if folder:  # the version matrix's record (pipeline/records/versions.py)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "rules.json"), "w") as f:
        json.dump({"tf_keras": tf_keras.__version__, "tensorflow": tf.__version__,
                   "backend": "tensorflow", "cases": cases, "labels": labels,
                   "gpu_kernels": gpu_kernels}, f, indent=1, sort_keys=True)
