"""A Keras LSTM in TensorFlow Lite: which ops the converter writes for Keras 3 and for tf-keras
(Keras 2), the tensor-list error a free batch size gives, and the ways around it. Each file that
converts is run with TFLite's interpreter and compared with Keras. On this machine the LSTMs do
not use cuDNN (no GPU): for a model whose LSTM took cuDNN, see "Export" on the same page.

Run it as it is: python keras_tflite_lstm.py
"""
# snippet: timeout=180
import os

os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow; set before Keras is imported
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import contextlib
import io
import re

import tensorflow as tf
from tensorflow.lite.python import schema_py_generated as schema

OP_NAMES = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}


def ops_in(tflite: bytes) -> list[str]:
    """The operators a .tflite file holds (builtin names, or the custom name of a Flex op)."""
    model = schema.Model.GetRootAsModel(tflite, 0)
    names = set()
    for i in range(model.OperatorCodesLength()):
        code = model.OperatorCodes(i)
        builtin = OP_NAMES[max(code.BuiltinCode(), code.DeprecatedBuiltinCode())]
        names.add(code.CustomCode().decode() if builtin == "CUSTOM" else builtin)
    return sorted(names)


# --8<-- [start:show]
import keras
import numpy as np
import tf_keras  # Keras 2, the tf.keras of TensorFlow 2.15 and older

x = np.random.default_rng(0).normal(size=(1, 6, 3)).astype("float32")


def convert(model, label, **settings):
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    for name, value in settings.items():
        setattr(converter, name, value)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the converter lists what it saved
            tflite = converter.convert()
    except Exception as err:  # tf.lite's ConverterError
        reason = re.search(r"Lowering tensor list ops is failed.*?flag", str(err)).group(0)
        print(f"{label:34} fails: {reason}")
        return None
    print(f"{label:34} {', '.join(ops_in(tflite))}")
    try:
        run = tf.lite.Interpreter(model_content=tflite).get_signature_runner()
        got = next(iter(run(**{next(iter(run.get_input_details())): x}).values()))
        print(f"{'':34} runs here, same as Keras: {np.allclose(got, model(x), atol=1e-5)}")
    except RuntimeError as err:
        print(f"{'':34} does not run here: {str(err).split('. ')[0]}.")
    return ops_in(tflite)


K = keras.layers
free = convert(keras.Sequential([keras.Input((6, 3)), K.LSTM(4)]), "Keras 3, batch free")
fixed = convert(keras.Sequential([keras.Input(batch_shape=(1, 6, 3)), K.LSTM(4)]),
                "Keras 3, batch_shape=(1, 6, 3)")
unrolled = convert(keras.Sequential([keras.Input((6, 3)), K.LSTM(4, unroll=True)]),
                   "Keras 3, unroll=True")
flex = convert(keras.Sequential([keras.Input((6, 3)), K.LSTM(4)]),
               "Keras 3, batch free, Select TF ops", _experimental_lower_tensor_list_ops=False,
               target_spec=tf.lite.TargetSpec(supported_ops=[tf.lite.OpsSet.TFLITE_BUILTINS,
                                                             tf.lite.OpsSet.SELECT_TF_OPS]))
keras2 = convert(tf_keras.Sequential([tf_keras.Input(batch_shape=(1, 6, 3)),
                                      tf_keras.layers.LSTM(4)]), "tf-keras, batch_shape=(1, 6, 3)")
# --8<-- [end:show]
print(f"Keras {keras.__version__}, tf-keras {tf_keras.__version__}, TensorFlow {tf.__version__}")
assert free is None
assert "WHILE" in fixed and "UNIDIRECTIONAL_SEQUENCE_LSTM" not in fixed, fixed
assert "WHILE" not in unrolled and "UNIDIRECTIONAL_SEQUENCE_LSTM" not in unrolled, unrolled
assert any(op.startswith("Flex") for op in flex), flex
assert "UNIDIRECTIONAL_SEQUENCE_LSTM" in keras2 and "WHILE" not in keras2, keras2
