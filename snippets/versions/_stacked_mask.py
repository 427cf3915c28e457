"""Two stacked LSTMs behind a Masking layer: what mask the second LSTM receives, whether Keras
sends each LSTM to cuDNN (a GPU pretended as in _keras3_cases.py), and the warnings Keras prints.

Asked of whichever Keras 3 release is installed, on the backend the snippet chose. Nothing here
knows what a release should do: keras-team/keras#23235 made recurrent layers stop passing their
mask downstream, and this shows what each release run does with the same model.
"""
import json
import os
import warnings

import numpy as np

import _keras3_cases as cases  # the backend, Keras, and how a GPU is pretended



def as_input(array):
    """The input as the backend takes it; on PyTorch a CPU tensor that says it is on `cuda:0`."""
    if cases.BACKEND == "torch":
        return cases.torch.as_tensor(array).as_subclass(cases.CudaLooking)
    return array

# --8<-- [start:show]
# Two sequences of 5 steps, 3 features; the first is padded with zeros after step 3.
x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")
x[0, 3:] = 0.0

calls = []  # the cuDNN calls Keras makes while a GPU is pretended
seen = {}  # per LSTM, its last call: the mask it received, whether Keras chose cuDNN


class LSTM(cases.L.LSTM):
    """keras.layers.LSTM, noting the mask it receives and whether Keras chose cuDNN for it."""
    def call(self, sequences, initial_state=None, mask=None, training=False):
        before = len(calls)
        out = super().call(sequences, initial_state=initial_state, mask=mask, training=training)
        seen[self.name] = {"mask": mask, "cudnn": len(calls) > before}
        return out


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model = cases.keras.Sequential([
        cases.keras.Input((5, 3)),
        cases.L.Masking(mask_value=0.0),
        LSTM(4, return_sequences=True, name="first_lstm"),
        LSTM(4, name="second_lstm"),
    ])
    with cases.pretend_gpu() as made:  # Keras believes a GPU is there
        calls = made
        model(as_input(x))

for name, what in seen.items():
    if what["mask"] is not None:
        what["mask"] = cases.keras.ops.convert_to_numpy(what["mask"]).astype(bool).tolist()
    print(f"{name}: mask {'none' if what['mask'] is None else what['mask'][0]}; "
          f"cuDNN {'yes' if what['cudnn'] else 'no'}")
messages = sorted({str(w.message) for w in caught if "mask" in str(w.message)})
for text in messages:
    print("warning:", text)
# --8<-- [end:show]

folder = os.environ.get("SNIPPET_DATA_DIR")
if folder:  # the version matrix's record (pipeline/records/versions.py)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "rules.json"), "w") as f:
        json.dump({"keras": cases.keras.__version__, "backend": cases.BACKEND,
                   "cases": {"stacked_lstm_mask": {
                       "layers": seen, "warnings": messages,
                       "calls": ["lstm"] if seen["second_lstm"]["cudnn"] else [],
                       "error": None}},
                   "labels": {"stacked_lstm_mask": "LSTM(4) after LSTM(4, return_sequences=True), "
                                                   "masked"}}, f, indent=1, sort_keys=True)
