"""jax.experimental.rnn.lstm under jax.jit: jitting the function itself makes its sizes and
flags tracers, which its custom_vjp refuses. Jit a function that fixes them (functools.partial,
or static_argnames) instead. jax.experimental.rnn runs only on a GPU (cuDNN): on a CPU the
tracing then reaches the cuDNN call and stops there. Run it as it is: python jax_rnn_jit.py
"""
# snippet: timeout=60
# --8<-- [start:show]
import functools

import jax
import jax.numpy as jnp
from jax.experimental import rnn

batch, steps, features, hidden, layers = 2, 5, 3, 4, 1
x = jnp.ones((batch, steps, features))
h0 = c0 = jnp.zeros((layers, batch, hidden))
weights = rnn.init_lstm_weight(jax.random.PRNGKey(0), features, hidden, layers, False)
seq_lengths = jnp.array([5, 3], dtype=jnp.int32)
sizes = dict(input_size=features, hidden_size=hidden, num_layers=layers, dropout=False,
             bidirectional=False)
print("jax", jax.__version__, "on", jax.devices()[0].platform)


def run(name, fn):
    try:
        y, h, c = fn(x, h0, c0, weights, seq_lengths)
        print(f"{name}: ran, output {y.shape}")
    except Exception as err:  # noqa: BLE001 - print what a reader would see
        print(f"{name}: {type(err).__name__}: {str(err).splitlines()[0]}")


run("jax.jit(rnn.lstm)", lambda *a: jax.jit(rnn.lstm)(*a, **sizes))
run("jax.jit(partial(rnn.lstm, sizes))", jax.jit(functools.partial(rnn.lstm, **sizes)))
run("jax.jit(rnn.lstm, static_argnames=sizes)",
    lambda *a: jax.jit(rnn.lstm, static_argnames=tuple(sizes))(*a, **sizes))
# --8<-- [end:show]
