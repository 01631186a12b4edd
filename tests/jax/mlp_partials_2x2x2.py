# Checks a GSPMD MLP step on a 2x2x2 mesh whose gradients leave partial sums of boxes of two sizes at one offset.
# expect-cmd: verify-jax
# expect-exit: 0
# expect-error: VERIFIED
# (scripts/jax-campaign.py seed 1, program 23: parity's prover crashed on it
# while it grouped such partial sums by offset alone.)
import parity_jax  # first: sets XLA_FLAGS before jax starts

import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

NAME = os.path.splitext(os.path.basename(__file__))[0]


def loss(params, x, y):
    w0, b0, w1, b1, w2, b2 = params
    h = jnp.tanh(x @ w0 + b0)
    h = jnp.tanh(h @ w1 + b1)
    pred = h @ w2 + b2
    return jnp.mean(jnp.log((pred - y) ** 2 + 1))


def step(w0, b0, w1, b1, w2, b2, x, y):
    params = (w0, b0, w1, b1, w2, b2)
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return tuple(p - 0.1 * g for p, g in zip(params, grads)) + (value,)


def main():
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(2, 2, 2), ("a", "b", "c"))
    f32 = jnp.float32
    shapes = [(12, 4), (4,), (4, 6), (6,), (6, 12), (12,), (16, 12), (16, 12)]
    args = tuple(jax.ShapeDtypeStruct(s, f32) for s in shapes)
    in_specs = (P(None, "b"), P(("a", "c")), P(None, "b"), P("a"), P("a", "c"), P(None),
                P(("b", "a"), None), P(None, None))
    parity_jax.export(step, args, mesh, in_specs, (P(),) * 7, name=NAME)


if __name__ == "__main__":
    main()
