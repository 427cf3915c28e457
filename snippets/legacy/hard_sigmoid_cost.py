"""What moving an old model to cuDNN's activations costs: the same weights give other numbers,
and a short fine-tuning brings the loss back near where it was. Measured on a small
synthetic task, on a CPU."""
# snippet: timeout=300
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# --8<-- [start:show]
import keras
import numpy as np

keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(1000, 20, 3)).astype("float32")
# Target: a fading memory of feature 0, gated by the sign of feature 1 (needs the gates).
decay = 0.8 ** np.arange(19, -1, -1)
y = (x[:, :, 0] * (x[:, :, 1] > 0) * decay).sum(axis=1, keepdims=True).astype("float32")
train, test = slice(0, 800), slice(800, None)


def fitted(rnn, epochs, weights=None):
    model = keras.Sequential([keras.Input(x.shape[1:]), rnn, keras.layers.Dense(1)])
    model.compile(keras.optimizers.Adam(0.01), "mse")
    if weights is not None:
        model.set_weights(weights)
    if epochs:
        model.fit(x[train], y[train], epochs=epochs, batch_size=50, verbose=0)
    return model


def gru_bias_after(weights):  # GRU(reset_after=False) bias (3u,) -> reset_after=True (2, 3u)
    kernel, recurrent, bias, *dense = weights
    return [kernel, recurrent, np.stack([bias, np.zeros_like(bias)]), *dense]


cases = [("LSTM", keras.layers.LSTM(16, recurrent_activation="hard_sigmoid"),
          lambda: keras.layers.LSTM(16), lambda w: w),
         ("GRU", keras.layers.GRU(16, recurrent_activation="hard_sigmoid", reset_after=False),
          lambda: keras.layers.GRU(16), gru_bias_after)]
print(f"Test MSE, lower is better (the target's variance is {y[test].var():.3f}).")
results = {}
for name, old_layer, new_layer, carry_over in cases:
    old = fitted(old_layer, epochs=12)                        # trained with the old defaults
    new = fitted(new_layer(), 0, carry_over(old.get_weights()))  # same weights, cuDNN's form
    shift = np.abs(new.predict(x[test], verbose=0) - old.predict(x[test], verbose=0))
    before = old.evaluate(x[test], y[test], verbose=0)
    switched = new.evaluate(x[test], y[test], verbose=0)
    new.fit(x[train], y[train], epochs=2, batch_size=50, verbose=0)  # fine-tune: 2 epochs
    tuned = new.evaluate(x[test], y[test], verbose=0)
    results[name] = before, switched, tuned
    print(f"{name}:\n  old defaults, trained 12 epochs   {before:.3f}\n"
          f"  same weights, cuDNN's defaults    {switched:.3f}   outputs moved by "
          f"{shift.mean():.3f} on average, {shift.max():.3f} at most\n"
          f"  then fine-tuned for 2 epochs      {tuned:.3f}")
# --8<-- [end:show]
for name, (before, switched, tuned) in results.items():
    assert switched > before, f"{name}: switching did not change the loss: {results}"
    assert tuned < switched, f"{name}: fine-tuning did not help: {results}"
