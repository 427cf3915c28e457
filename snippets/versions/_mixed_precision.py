"""Keras's dtype policies on an LSTM and a GRU: under float32, mixed_float16 and mixed_bfloat16,
whether Keras still chooses its cuDNN function (a GPU pretended as in _keras3_cases.py) and the
dtypes it hands to it: the input, and the states and weights beside it.

Below the cuDNN function, the framework decides what runs, and this asks it too, on a CPU:
- TensorFlow: the op the release's own cuDNN function builds, and its dtype (the function
  traced into a graph with Keras's arguments, which needs no GPU); and the dtypes the installed
  TensorFlow registers GPU kernels of its cuDNN RNN ops for (`CudnnRNN`, `CudnnRNNV3`): the Linux
  wheel carries the GPU kernels, so a CPU can list them.
- JAX: whether jaxlib's rule that turns the cuDNN LSTM into a GPU call accepts the dtype Keras
  hands it (its dtype check runs before anything needs a GPU).
- PyTorch: the body of Keras's cuDNN function, run on CPU tensors (the op it calls is the one
  PyTorch sends to cuDNN on a GPU): whether it runs, and the dtype it returns. Which dtypes
  PyTorch's cuDNN RNN then takes is PyTorch's own rule (the criteria page shows it).

Asked of whichever Keras 3 release is installed, on the backend the snippet chose. Nothing here
knows what a release should do.
"""
import importlib
import json
import os
import types

import _keras3_cases as cases  # the backend, Keras, and how a GPU is pretended

POLICIES = ("float32", "mixed_float16", "mixed_bfloat16")
KINDS = {"lstm": "LSTM", "gru": "GRU"}


def dtype_name(x):
    """"float16" for a TensorFlow, JAX, NumPy or PyTorch array; None for anything else."""
    d = getattr(x, "dtype", None)
    if d is None or isinstance(x, (type, types.ModuleType)):
        return None
    return str(getattr(d, "name", d)).replace("torch.", "")


def _arrays(args, kwargs):
    """The floating dtypes among the arguments (not the sequence lengths JAX takes)."""
    for a in list(args) + list(kwargs.values()):
        for item in (a if isinstance(a, (list, tuple)) else [a]):
            if "float" in (dtype_name(item) or ""):
                yield dtype_name(item)


def set_policy(name):
    mp = cases.keras.mixed_precision
    (getattr(mp, "set_dtype_policy", None) or mp.set_global_policy)(name)


def _cudnn_module():
    if cases.BACKEND == "jax":
        return importlib.import_module("jax.experimental.rnn"), ("lstm",)
    return cases.rnn, ("_cudnn_lstm", "_cudnn_gru")


def tf_ops(original, args, kwargs):
    """TensorFlow: the release's own cuDNN function, traced into a graph with the arguments
    Keras gave it (tracing needs no GPU kernel): its cuDNN ops and their dtype."""
    import tensorflow as tf
    fn = getattr(original, "python_function", original)  # a tf.function wraps it
    try:
        graph = tf.function(fn).get_concrete_function(*args, **kwargs).graph.as_graph_def()
    except Exception as e:
        return f"not traced: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    return sorted({f"{n.op} {tf.as_dtype(n.attr['T'].type).name}" for n in nodes
                   if n.op.startswith("CudnnRNN") and "T" in n.attr})


PREPARE = ("prepare_lstm_params", "prepare_gru_params")  # what the PyTorch body calls


def torch_body(originals, name, args, kwargs):
    """PyTorch: Keras's own cuDNN function run on CPU tensors, as keras3_torch.py
    runs it, with the weight packing it calls put back (pretend_gpu records those):
    "runs, returns float16", or the error it raised."""
    torch = cases.torch
    pretended = {n: getattr(cases.rnn, n) for n in PREPARE if n in originals}

    def on_cpu(value):
        if isinstance(value, torch.Tensor):
            return value.as_subclass(torch.Tensor)
        if isinstance(value, torch.device) or value in ("cuda", "cuda:0"):
            return torch.device("cpu")
        return value
    try:
        for n in pretended:
            setattr(cases.rnn, n, originals[n])
        out = originals[name](*map(on_cpu, args), **{k: on_cpu(v) for k, v in kwargs.items()})
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    finally:
        for n, value in pretended.items():
            setattr(cases.rnn, n, value)
    first = out[0] if isinstance(out, (list, tuple)) else out
    return f"runs, returns {dtype_name(first)}"


def _spy_on(seen, originals):
    """Inside pretend_gpu(): note the dtypes of every call to Keras's cuDNN function (the
    recorder pretend_gpu put there still runs, and Keras falls back as on every release)."""
    module, names = _cudnn_module()
    for name in names:
        inner = getattr(module, name, None)
        if inner is None:
            continue

        def spy(*args, _inner=inner, _name=name, **kwargs):
            found = list(_arrays(args, kwargs))
            seen.append({"input": found[0] if found else None, "others": sorted(set(found[1:]))})
            if cases.BACKEND == "tensorflow":
                seen[-1]["ops"] = tf_ops(originals[_name], args, kwargs)
            elif cases.BACKEND == "torch":
                seen[-1]["body"] = torch_body(originals, _name, args, kwargs)
            return _inner(*args, **kwargs)
        setattr(module, name, spy)  # pretend_gpu puts back the original when it ends


def policy_case(kind, policy):
    set_policy(policy)
    try:
        layer = getattr(cases.L, KINDS[kind])(4)
        seen = []
        module, names = _cudnn_module()
        originals = {n: getattr(module, n) for n in names + PREPARE if hasattr(module, n)}
        with cases.pretend_gpu() as calls:
            _spy_on(seen, originals)
            out = layer(cases._input())
    except Exception as e:  # a policy or layer this release refuses
        return {"calls": [], "error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    finally:
        set_policy("float32")
    result = {"calls": [c["kind"] for c in calls], "error": None,
              "variables": sorted({dtype_name(v) or str(v.dtype) for v in layer.weights}),
              "output": dtype_name(out)}
    if seen:
        result["input"], result["others"] = seen[0]["input"], seen[0]["others"]
        for key in ("ops", "body"):
            if key in seen[0]:
                result[key] = seen[0][key]
        if cases.BACKEND == "jax":
            result["jaxlib_accepts"] = jaxlib_accepts(seen[0]["input"])
    return result


def jaxlib_accepts(dtype):
    """jaxlib's own lowering rule for the cuDNN LSTM, run up to its dtype check: "yes", or the
    error it raises. Older jaxlib names it cudnn_rnn_lowering(ctx, ...), newer
    _rnn_fwd_lowering(_rnn, platform, ctx, ...)."""
    import jax.numpy as jnp
    import jaxlib.mlir.ir as ir
    from jaxlib import gpu_rnn
    aval = types.SimpleNamespace(dtype=jnp.dtype(dtype), shape=(2, 5, 4))
    ctx = types.SimpleNamespace(avals_out=[aval], avals_in=[aval])
    kwargs = dict(input_size=3, hidden_size=4, num_layers=1, dropout=False, bidirectional=False,
                  cudnn_allow_tf32=True)
    if hasattr(gpu_rnn, "_rnn_fwd_lowering"):
        lower = lambda: gpu_rnn._rnn_fwd_lowering(None, "cuda", ctx, *[None] * 5, **kwargs)
    elif hasattr(gpu_rnn, "cudnn_rnn_lowering"):
        lower = lambda: gpu_rnn.cudnn_rnn_lowering(ctx, *[None] * 5, **kwargs)
    else:
        return "not asked: this jaxlib has neither lowering rule"
    try:
        with ir.Context(), ir.Location.unknown():
            lower()
    except ValueError as err:  # the dtype check
        return f"no: ValueError: {err}"
    except NameError as err:  # past the check: the next step needs jaxlib's CUDA plugin
        if "compute_rnn_workspace_reserve_space_sizes" not in str(err):
            raise
        return "yes"
    return "yes"


def tf_gpu_kernels():
    """{op: [dtype, ...]}: the dtypes the installed TensorFlow registers GPU kernels for."""
    import tensorflow as tf
    from tensorflow.python.framework import kernels
    return {op: sorted(tf.as_dtype(t).name
                       for k in kernels.get_registered_kernels_for_op(op).kernel
                       if k.device_type == "GPU" for c in k.constraint if c.name == "T"
                       for t in c.allowed_values.list.type)
            for op in ("CudnnRNN", "CudnnRNNV3")}


def run_policies():
    results, labels = {}, {}
    for kind in KINDS:
        for policy in POLICIES:
            case = f"{kind}_{policy}"
            labels[case] = f"{KINDS[kind]}(4), {policy}"
            results[case] = policy_case(kind, policy)
    data = {"keras": cases.keras.__version__, "backend": cases.BACKEND, "cases": results,
            "labels": labels}
    if cases.BACKEND == "tensorflow":
        import tensorflow as tf
        data["tensorflow"], data["gpu_kernels"] = tf.__version__, tf_gpu_kernels()
    elif cases.BACKEND == "jax":
        import jax
        data["jax"] = jax.__version__
    else:
        data["torch"] = cases.torch.__version__
    return data


def report_policies(data):
    """One line a case, and data/rules.json for the page's tables."""
    name = {"tensorflow": "TensorFlow", "jax": "JAX", "torch": "PyTorch"}[cases.BACKEND]
    print(f"Keras {data['keras']} on the {name} backend, a GPU pretended:")
    for case, r in data["cases"].items():
        if r["error"]:
            what = r["error"]
        elif r["calls"]:
            what = f"cuDNN, given input {r['input']}, states and weights " \
                   f"{', '.join(r['others']) or '-'}"
            if "ops" in r:
                what += f"; traced: {', '.join(r['ops']) if isinstance(r['ops'], list) else r['ops']}"
            if "body" in r:
                what += f"; Keras's cuDNN function on the CPU: {r['body']}"
            if "jaxlib_accepts" in r:
                what += f"; jaxlib accepts it: {r['jaxlib_accepts']}"
        else:
            what = f"generic kernel, output {r['output']}"
        print(f"  {data['labels'][case]:23} {what}")
    for op, dtypes in data.get("gpu_kernels", {}).items():
        print(f"TensorFlow {data['tensorflow']}: GPU kernels of {op} for {', '.join(dtypes)}")
    folder = os.environ.get("SNIPPET_DATA_DIR")
    if folder:  # the version matrix's record (pipeline/records/versions.py)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "rules.json"), "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
