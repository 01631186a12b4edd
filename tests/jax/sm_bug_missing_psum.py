# Checks that a bug is caught: sm_mlp_ok.py with the psum over tp of the partial outputs dropped.
# expect-cmd: verify-jax
# expect-exit: 1
# expect-error: MISMATCH
# expect-error: (sm_bug_missing_psum.py:33) holds a partial sum over [tp]
import parity_jax  # first: sets XLA_FLAGS before jax starts

import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

BATCH, D_IN, HIDDEN, D_OUT = 32, 16, 32, 16
LR = 0.1
NAME = os.path.splitext(os.path.basename(__file__))[0]

# Shardings of the inputs: Megatron weights on tp (w1 by columns, w2 by rows),
# targets on dp, and the input rows split further over tp (sequence-parallel
# style), so each device holds BATCH/8 = 4 rows of x.
W1_SPEC, W2_SPEC = P(None, "tp"), P("tp", None)
X_SPEC, Y_SPEC = P(("dp", "tp"), None), P("dp", None)


def local_loss(w1, w2, x, y):
    """The loss on one device; its collectives make it the global loss."""
    # Gather this dp group's rows from the tp devices: [tp, rows, D_IN].
    xg = jax.lax.all_gather(x, "tp", axis=0)
    xg = xg.reshape(-1, x.shape[-1])
    h = jnp.tanh(xg @ w1)
    # Each tp device holds a slice of the hidden units: sum the partial outputs.
    pred = h @ w2
    local_mean = jnp.mean((pred - y) ** 2)
    # The mean over the whole batch: average the dp groups' means.
    return jax.lax.psum(local_mean, "dp") / jax.lax.axis_size("dp")


def sm_step(w1, w2, x, y):
    # No mesh argument: shard_map takes the mesh in context. It is made here,
    # inside the step, because a shard_map wrapper keeps the first mesh it
    # runs under, and export compiles the step on two meshes.
    sharded_loss = jax.shard_map(
        local_loss, in_specs=(W1_SPEC, W2_SPEC, X_SPEC, Y_SPEC),
        out_specs=P(), check_vma=False)
    loss, (g1, g2) = jax.value_and_grad(sharded_loss, argnums=(0, 1))(
        w1, w2, x, y)
    return (w1 - LR * g1, w2 - LR * g2), loss


def main():
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("dp", "tp"))
    f32 = jnp.float32
    args = (jax.ShapeDtypeStruct((D_IN, HIDDEN), f32),
            jax.ShapeDtypeStruct((HIDDEN, D_OUT), f32),
            jax.ShapeDtypeStruct((BATCH, D_IN), f32),
            jax.ShapeDtypeStruct((BATCH, D_OUT), f32))
    parity_jax.export(sm_step, args, mesh,
                      (W1_SPEC, W2_SPEC, X_SPEC, Y_SPEC),
                      ((W1_SPEC, W2_SPEC), P()), name=NAME)


if __name__ == "__main__":
    main()
