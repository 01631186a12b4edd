# Checks that a bug is caught: sm_ring_ok.py gathering w2 by a ring that turns the other way, so hidden units mismatch.
# expect-cmd: verify-jax
# expect-exit: 1
# expect-error: MISMATCH
# expect-error: sm_bug_ppermute_direction.py:
import parity_jax  # first: sets XLA_FLAGS before jax starts

import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

BATCH, D_IN, HIDDEN, D_OUT = 8, 16, 32, 16
LR = 0.1
NAME = os.path.splitext(os.path.basename(__file__))[0]

# The weights are stored sharded over tp (w1 by columns, w2 by rows, as in
# FSDP) and gathered whole on each device before use; the batch is on dp.
W1_SPEC, W2_SPEC = P(None, "tp"), P("tp", None)
X_SPEC, Y_SPEC = P("dp", None), P("dp", None)


def ring_all_gather(a, axis, shift):
    """Gather the tp shards of ``a`` along array axis ``axis`` by a ring.

    Each of the n - 1 steps passes the last received shard to the device
    ``shift`` places on. Device t ends with its own shard first, then those of
    devices t - shift, t - 2 * shift, ...: the whole array, rotated by t.
    """
    n = jax.lax.axis_size("tp")
    perm = [(i, (i + shift) % n) for i in range(n)]
    chunks = [a]
    for _ in range(n - 1):
        a = jax.lax.ppermute(a, "tp", perm)
        chunks.append(a)
    return jnp.concatenate(chunks, axis=axis)


def local_loss(w1, w2, x, y):
    """The loss on one device; its collectives make it the global loss."""
    # Both gathers rotate the hidden units the same way, so w1's columns
    # still meet w2's matching rows and the rotation cancels out.
    w1_full = ring_all_gather(w1, 1, shift=1)
    w2_full = ring_all_gather(w2, 0, shift=-1)
    h = jnp.tanh(x @ w1_full)
    local_mean = jnp.mean((h @ w2_full - y) ** 2)
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
