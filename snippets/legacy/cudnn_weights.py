"""Convert CuDNNLSTM / CuDNNGRU weights into LSTM / GRU(reset_after=True) weights, and check the
result on a CPU against NVIDIA's LSTM and GRU equations.

Copy the functions between the `convert` markers into your project (NumPy, and h5py to read):

    lstm.set_weights(lstm_from_cudnn(*read_h5_weights("old.h5", "lstm")))  # bias: 8 x units
    gru.set_weights(gru_from_cudnn(kernel, recurrent_kernel, bias))        # bias: 6 x units
"""
# snippet: timeout=180
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

# --8<-- [start:convert]
import numpy as np


def _per_gate(matrix, gates, change):
    """Apply `change` to each gate's block of columns."""
    return np.hstack([change(block) for block in np.hsplit(matrix, gates)])


def _input_kernel(block):
    # CuDNNLSTM hands cuDNN each (input_dim, units) block flattened as it is; cuDNN reads it
    # as a (units, input_dim) matrix W and computes W @ x. Keras computes x @ kernel.
    return block.reshape(block.shape[1], block.shape[0]).T


def lstm_from_cudnn(kernel, recurrent_kernel, bias):
    """CuDNNLSTM weights -> LSTM weights. Gate order i, f, c, o in both.
    Shapes (input_dim, 4u), (u, 4u), (8u,) -> (input_dim, 4u), (u, 4u), (4u,)."""
    units = recurrent_kernel.shape[0]
    if bias.shape != (8 * units,):
        raise ValueError(f"a CuDNNLSTM bias has shape ({8 * units},), got {bias.shape}")
    return [_per_gate(kernel, 4, _input_kernel),
            _per_gate(recurrent_kernel, 4, np.transpose),
            bias[:4 * units] + bias[4 * units:]]  # input bias + recurrent bias


def gru_from_cudnn(kernel, recurrent_kernel, bias):
    """CuDNNGRU weights -> GRU(reset_after=True) weights. Gate order z, r, h in both.
    Shapes (input_dim, 3u), (u, 3u), (6u,) -> (input_dim, 3u), (u, 3u), (2, 3u)."""
    units = recurrent_kernel.shape[0]
    if bias.shape != (6 * units,):
        raise ValueError(f"a CuDNNGRU bias has shape ({6 * units},), got {bias.shape}")
    return [_per_gate(kernel, 3, _input_kernel),
            _per_gate(recurrent_kernel, 3, np.transpose),
            bias.reshape(2, 3 * units)]  # row 0: input biases, row 1: recurrent biases


def read_h5_weights(path, layer_name):
    """The arrays of one layer in a Keras 2 H5 file (weights only, or a whole model)."""
    import h5py

    with h5py.File(path, "r") as f:
        group = f["model_weights"] if "model_weights" in f else f
        layer = group[layer_name]
        return [np.asarray(layer[name]) for name in layer.attrs["weight_names"]]
# --8<-- [end:convert]


# --8<-- [start:reference]
def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def cudnn_matrices(kernel, recurrent_kernel, bias, order):
    """The W, R, b_W, b_R per gate that cuDNN receives from CuDNNLSTM / CuDNNGRU: each block
    flattened row by row, read as (units, input_dim) and (units, units) matrices. `order` lists
    the Keras column blocks in cuDNN's gate order."""
    units, n_in = recurrent_kernel.shape[0], kernel.shape[0]
    col = lambda m, g: m[:, g * units:(g + 1) * units]  # noqa: E731
    W = [col(kernel, g).reshape(units, n_in) for g in order]
    R = [col(recurrent_kernel, g).reshape(units, units) for g in order]
    half = len(order) * units
    bW = [bias[g * units:(g + 1) * units] for g in order]
    bR = [bias[half + g * units:half + (g + 1) * units] for g in order]
    return W, R, bW, bR


def cudnn_lstm_reference(x, kernel, recurrent_kernel, bias):
    """NVIDIA's CUDNN_LSTM equations (cudnnRNNMode_t), gates i, f, c', o, in NumPy float64."""
    W, R, bW, bR = cudnn_matrices(kernel, recurrent_kernel, bias, order=[0, 1, 2, 3])
    h = c = np.zeros((x.shape[0], recurrent_kernel.shape[0]))
    outputs = []
    for t in range(x.shape[1]):
        pre = [x[:, t] @ W[g].T + h @ R[g].T + bW[g] + bR[g] for g in range(4)]
        i, f, c_new, o = sigmoid(pre[0]), sigmoid(pre[1]), np.tanh(pre[2]), sigmoid(pre[3])
        c = f * c + i * c_new
        h = o * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs, axis=1)


def cudnn_gru_reference(x, kernel, recurrent_kernel, bias):
    """NVIDIA's CUDNN_GRU equations: cuDNN's gate order is r (reset), u (update), h' (new); the
    reset gate multiplies (R_h h + b_Rh), after the matrix product."""
    # CuDNNGRU stores Keras's order z, r, h and passes r, z, h to cuDNN.
    W, R, bW, bR = cudnn_matrices(kernel, recurrent_kernel, bias, order=[1, 0, 2])
    h = np.zeros((x.shape[0], recurrent_kernel.shape[0]))
    outputs = []
    for t in range(x.shape[1]):
        r = sigmoid(x[:, t] @ W[0].T + h @ R[0].T + bW[0] + bR[0])
        u = sigmoid(x[:, t] @ W[1].T + h @ R[1].T + bW[1] + bR[1])
        h_new = np.tanh(x[:, t] @ W[2].T + r * (h @ R[2].T + bR[2]) + bW[2])
        h = (1 - u) * h_new + u * h
        outputs.append(h)
    return np.stack(outputs, axis=1)
# --8<-- [end:reference]


# --8<-- [start:show]
def check(seed=0, batch=3, steps=7, input_dim=5, units=4):
    import keras

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(batch, steps, input_dim)).astype("float32")
    for name, gates, convert, reference, layer in [
        ("LSTM", 4, lstm_from_cudnn, cudnn_lstm_reference, keras.layers.LSTM),
        ("GRU", 3, gru_from_cudnn, cudnn_gru_reference, keras.layers.GRU),
    ]:
        # Weights in CuDNN layout, as a CuDNNLSTM / CuDNNGRU file holds them.
        cudnn = [rng.normal(scale=0.5, size=(input_dim, gates * units)).astype("float32"),
                 rng.normal(scale=0.5, size=(units, gates * units)).astype("float32"),
                 rng.normal(scale=0.5, size=(2 * gates * units,)).astype("float32")]
        expected = reference(x.astype("float64"), *cudnn)

        rnn = layer(units, return_sequences=True)  # defaults: GRU has reset_after=True
        rnn.build(x.shape)
        rnn.set_weights(convert(*cudnn))
        got = keras.ops.convert_to_numpy(rnn(x))
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        print(f"{name}: CuDNN bias {cudnn[2].shape} -> {name} bias {rnn.weights[2].shape}; "
              f"max |Keras - NumPy cuDNN equations| = {np.abs(got - expected).max():.1e}")

        # A naive copy (kernels as they are, input biases only) gives other numbers.
        naive = [cudnn[0], cudnn[1], cudnn[2][:gates * units]]
        if name == "GRU":
            naive[2] = np.stack([naive[2], np.zeros_like(naive[2])])
        rnn.set_weights(naive)
        wrong = np.abs(keras.ops.convert_to_numpy(rnn(x)) - expected).max()
        print(f"{name}: without the conversion the outputs are off by up to {wrong:.2f}")
        assert wrong > 1e-2, wrong


if __name__ == "__main__":
    check()
# --8<-- [end:show]
