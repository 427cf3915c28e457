"""Export a Keras 3 model whose LSTM took cuDNN: what SavedModel serving on a CPU, ONNX and
TFLite make of it, and the fix (an export copy with use_cudnn=False); for TFLite, both routes:
a fixed loop (unroll=True) or TensorFlow's ops through the Flex delegate."""
# snippet: timeout=240
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import logging
import re
import tempfile

logging.getLogger("tf2onnx").setLevel(logging.CRITICAL)  # it logs each unsupported op itself
import numpy as np
import onnx
import tensorflow as tf


def try_export(model, name, formats=("SavedModel", "ONNX", "TFLite")):
    """Export, then use each file on the CPU. Returns one line per format."""
    folder, out = tempfile.mkdtemp(), {}
    model.export(f"{folder}/saved", format="tf_saved_model", verbose=False)
    try:
        if "SavedModel" not in formats:
            raise StopIteration
        loaded = tf.saved_model.load(f"{folder}/saved")
        served = loaded.serve(x).numpy()
        out["SavedModel, served on CPU"] = "ok" if np.allclose(served, expected) else "differs"
    except tf.errors.InvalidArgumentError as err:
        out["SavedModel, served on CPU"] = err.message.split(" used by")[0]
    except StopIteration:
        pass
    if "ONNX" in formats:
        model.export(f"{folder}/m.onnx", format="onnx", verbose=False)
        unknown = {n.op_type for n in onnx.load(f"{folder}/m.onnx").graph.node
                   if not onnx.defs.has(n.op_type, n.domain)}
        out["ONNX (tf2onnx)"] = (f"ops outside the ONNX standard: {sorted(unknown)}" if unknown
                                 else "only standard ONNX ops")
    try:
        tflite = tf.lite.TFLiteConverter.from_saved_model(f"{folder}/saved").convert()
        run = tf.lite.Interpreter(model_content=tflite).get_signature_runner()
        result = next(iter(run(**{run.get_input_details().popitem()[0]: x}).values()))
        out["TFLite"] = "ok" if np.allclose(result, expected, atol=1e-5) else "differs"
    except Exception as err:  # tf.lite's ConverterError
        out["TFLite"] = re.search(r"'tf\.\w+' op is neither a custom op nor a flex op|"
                                  r"Lowering tensor list ops is failed\.", str(err)).group(0)
    for fmt, result in out.items():
        print(f"{name:26} {fmt:26} {result}")
    return out


def tflite_with_flex(model, lower_tensor_lists=None):
    """The other TFLite route: builtin ops plus TensorFlow's own ops (Flex) for the loop."""
    folder = tempfile.mkdtemp()
    model.export(f"{folder}/saved", format="tf_saved_model", verbose=False)
    converter = tf.lite.TFLiteConverter.from_saved_model(f"{folder}/saved")
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS,
                                           tf.lite.OpsSet.SELECT_TF_OPS]
    if lower_tensor_lists is not None:  # the flag TFLite's error message asks for
        converter._experimental_lower_tensor_list_ops = lower_tensor_lists
    flatbuffer = converter.convert()
    flex_ops = sorted({op.decode() for op in re.findall(rb"Flex\w+", flatbuffer)})
    try:  # TensorFlow's own Python interpreter
        tf.lite.Interpreter(model_content=flatbuffer).allocate_tensors()
        runs = "runs"
    except RuntimeError as err:
        runs = re.search(r"Select TensorFlow op\(s\).*?before inference\.", str(err)).group(0)
    return flex_ops, runs


# --8<-- [start:show]
import importlib

import keras
import numpy as np

# This machine has no GPU: tell Keras's TensorFlow backend it has one (private; for this demo
# only), so the exported graph holds what a model exported on a GPU holds.
tf_rnn = importlib.import_module("keras.src.backend.tensorflow.rnn")
tf_rnn._is_gpu_available = lambda: True

def make(**lstm_args):
    return keras.Sequential([keras.Input((5, 3)),
                             keras.layers.Bidirectional(keras.layers.LSTM(4, **lstm_args)),
                             keras.layers.Dense(1)])

x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")

# try_export(model, name): exports the model to SavedModel, ONNX and TFLite and uses each
# file on the CPU; tflite_with_flex(model): TFLite with TensorFlow's own ops (both above,
# in the whole program)
trained = make()                       # trained on a GPU: its LSTM uses cuDNN
expected = trained(x).numpy()
as_trained = try_export(trained, "model as trained")

export_copy = make(use_cudnn=False)    # the fix: same layers without cuDNN ...
export_copy.set_weights(trained.get_weights())  # ... and the trained weights
fixed = try_export(export_copy, "copy with use_cudnn=False")

tflite_copy = make(use_cudnn=False, unroll=True)  # TFLite's builtin ops need a fixed loop
tflite_copy.set_weights(trained.get_weights())
unrolled = try_export(tflite_copy, "copy, also unroll=True", formats=("TFLite",))

flex_ops, flex_runs = tflite_with_flex(export_copy)
flag_ops, _ = tflite_with_flex(export_copy, lower_tensor_lists=False)
print(f"{'copy with use_cudnn=False':26} {'TFLite + SELECT_TF_OPS':26} needs {flex_ops}")
print(f"{'':26} {'':26} with _experimental_lower_tensor_list_ops=False: "
      f"{'the same ops' if flag_ops == flex_ops else flag_ops}")
print(f"{'':26} {'':26} tf.lite.Interpreter: {flex_runs}")
# --8<-- [end:show]
assert "No OpKernel was registered to support Op 'CudnnRNNV3'" in as_trained["SavedModel, served on CPU"]
assert "CudnnRNNV3" in as_trained["ONNX (tf2onnx)"] and "CudnnRNNV3" in as_trained["TFLite"]
assert fixed["SavedModel, served on CPU"] == "ok", fixed
assert fixed["ONNX (tf2onnx)"] == "only standard ONNX ops", fixed
assert "Lowering tensor list ops is failed" in fixed["TFLite"], fixed
assert unrolled == {"TFLite": "ok"}, unrolled
assert flex_ops and all(op.startswith("FlexTensorList") for op in flex_ops), flex_ops
assert flag_ops == flex_ops, (flag_ops, flex_ops)  # the flag changes nothing in this TensorFlow
assert flex_runs.startswith("Select TensorFlow op(s)"), flex_runs
