# Checks a GSPMD-partitioned 2-layer MLP SGD step (dp=2, tp=4, Megatron shardings).
# expect-cmd: verify-jax
# expect-exit: 0
# expect-error: VERIFIED
import parity_jax  # first: sets XLA_FLAGS before jax starts

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

BATCH, D_IN, HIDDEN, D_OUT = 8, 16, 32, 16
LR = 0.1


def loss_fn(params, x, y):
    w1, w2 = params
    h = jnp.tanh(x @ w1)
    pred = h @ w2
    return jnp.mean((pred - y) ** 2)


def mlp_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    new_params = tuple(p - LR * g for p, g in zip(params, grads))
    return new_params, loss


def main():
    devices = np.array(jax.devices()[:8]).reshape(2, 4)
    mesh = Mesh(devices, ("dp", "tp"))
    f32 = jnp.float32
    params = (jax.ShapeDtypeStruct((D_IN, HIDDEN), f32),
              jax.ShapeDtypeStruct((HIDDEN, D_OUT), f32))
    x = jax.ShapeDtypeStruct((BATCH, D_IN), f32)
    y = jax.ShapeDtypeStruct((BATCH, D_OUT), f32)
    # Megatron: w1 split by columns on tp, w2 by rows on tp; batch on dp.
    param_specs = (P(None, "tp"), P("tp", None))
    in_specs = (param_specs, P("dp", None), P("dp", None))
    out_specs = (param_specs, P())
    parity_jax.export(mlp_step, (params, x, y), mesh, in_specs, out_specs,
                      name="mlp_dp_tp")


if __name__ == "__main__":
    main()
