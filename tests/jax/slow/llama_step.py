# A GSPMD-partitioned Llama-style AdamW training step (not in the suite: see tests/jax/README.md).
"""A small Llama-style training step, exported for parity.

Two decoder layers (RMSNorm, multi-head attention with RoPE, SwiGLU MLP), a
final RMSNorm, logits, cross-entropy, jax.grad and a hand-written AdamW
update. Every op is chosen to avoid compare/select/iota/gather: tokens and
labels come in as float one-hot arrays, RoPE tables as inputs, softmax and
log-softmax are written out with a stop_gradient on the max, and there is no
causal mask.

Usage: python llama_step.py [--mesh KIND ...]  (KIND: fsdp_tp, dp, fsdp, tp, dp_tp_sp;
default: fsdp_tp dp_tp_sp)
"""
import parity_jax  # first: sets XLA_FLAGS before jax starts

import argparse

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

BATCH, SEQ, VOCAB = 16, 12, 40
D_MODEL, N_HEADS, HEAD_DIM, D_FF = 32, 4, 8, 48
N_LAYERS = 2
NORM_EPS = 1e-6

LR, BETA1, BETA2, ADAM_EPS, WEIGHT_DECAY = 1e-3, 0.9, 0.95, 1e-8, 0.1
STEP_COUNT = 3  # the (constant) step number used for bias correction

LAYER_PARAMS = ("attn_norm", "wq", "wk", "wv", "wo",
                "mlp_norm", "w_gate", "w_up", "w_down")


# ---------------------------------------------------------------------------
# Model.

def param_shapes():
    """The shape of each parameter, as a dict of dicts/lists."""
    layer = {
        "attn_norm": (D_MODEL,),
        "wq": (D_MODEL, N_HEADS * HEAD_DIM),
        "wk": (D_MODEL, N_HEADS * HEAD_DIM),
        "wv": (D_MODEL, N_HEADS * HEAD_DIM),
        "wo": (N_HEADS * HEAD_DIM, D_MODEL),
        "mlp_norm": (D_MODEL,),
        "w_gate": (D_MODEL, D_FF),
        "w_up": (D_MODEL, D_FF),
        "w_down": (D_FF, D_MODEL),
    }
    return {
        "embed": (VOCAB, D_MODEL),
        "layers": [dict(layer) for _ in range(N_LAYERS)],
        "final_norm": (D_MODEL,),
        "lm_head": (D_MODEL, VOCAB),
    }


def rms_norm(x, weight):
    variance = jnp.mean(x * x, axis=-1, keepdims=True)
    return x * jax.lax.rsqrt(variance + NORM_EPS) * weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def apply_rope(x, cos, sin):
    """x: [batch, seq, heads, head_dim]; cos, sin: [seq, head_dim]."""
    cos = cos[None, :, None, :]
    sin = sin[None, :, None, :]
    return x * cos + rotate_half(x) * sin


def softmax(x):
    """Softmax over the last axis, without the compares of jax.nn.softmax."""
    z = x - jax.lax.stop_gradient(jnp.max(x, axis=-1, keepdims=True))
    e = jnp.exp(z)
    return e / jnp.sum(e, axis=-1, keepdims=True)


def log_softmax(x):
    z = x - jax.lax.stop_gradient(jnp.max(x, axis=-1, keepdims=True))
    return z - jnp.log(jnp.sum(jnp.exp(z), axis=-1, keepdims=True))


def attention(p, x, cos, sin):
    b, s, _ = x.shape
    q = (x @ p["wq"]).reshape(b, s, N_HEADS, HEAD_DIM)
    k = (x @ p["wk"]).reshape(b, s, N_HEADS, HEAD_DIM)
    v = (x @ p["wv"]).reshape(b, s, N_HEADS, HEAD_DIM)
    q = apply_rope(q, cos, sin)
    k = apply_rope(k, cos, sin)
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) * (HEAD_DIM ** -0.5)
    weights = softmax(scores)  # no causal mask: every token sees every token
    out = jnp.einsum("bhqk,bkhd->bqhd", weights, v)
    return out.reshape(b, s, N_HEADS * HEAD_DIM) @ p["wo"]


def silu(x):
    # Written out: jax.nn.silu is a jitted function and would show up as a
    # call in the exported module.
    return x * jax.nn.sigmoid(x)


def swiglu(p, x):
    return (silu(x @ p["w_gate"]) * (x @ p["w_up"])) @ p["w_down"]


def loss_fn(params, tokens, labels, cos, sin):
    """Mean cross-entropy; tokens and labels are one-hot [batch, seq, vocab]."""
    x = tokens @ params["embed"]
    for p in params["layers"]:
        x = x + attention(p, rms_norm(x, p["attn_norm"]), cos, sin)
        x = x + swiglu(p, rms_norm(x, p["mlp_norm"]))
    logits = rms_norm(x, params["final_norm"]) @ params["lm_head"]
    return -jnp.mean(jnp.sum(labels * log_softmax(logits), axis=-1))


def adamw(param, grad, m, v):
    """One AdamW update of one parameter; returns (param, m, v)."""
    m = BETA1 * m + (1 - BETA1) * grad
    v = BETA2 * v + (1 - BETA2) * grad * grad
    m_hat = m / (1 - BETA1 ** STEP_COUNT)
    v_hat = v / (1 - BETA2 ** STEP_COUNT)
    update = m_hat / (jnp.sqrt(v_hat) + ADAM_EPS) + WEIGHT_DECAY * param
    return param - LR * update, m, v


def llama_step(params, m, v, tokens, labels, cos, sin):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens, labels, cos, sin)
    updated = jax.tree.map(adamw, params, grads, m, v)
    # Split the tree of (param, m, v) triples into three trees.
    is_triple = lambda t: isinstance(t, tuple)
    new_params = jax.tree.map(lambda t: t[0], updated, is_leaf=is_triple)
    new_m = jax.tree.map(lambda t: t[1], updated, is_leaf=is_triple)
    new_v = jax.tree.map(lambda t: t[2], updated, is_leaf=is_triple)
    return new_params, new_m, new_v, loss


# ---------------------------------------------------------------------------
# Meshes and shardings.

def megatron_specs(fsdp, tp):
    """Parameter specs: Megatron on axis tp, FSDP on axis fsdp (either None).

    Column-parallel matrices (wq, wk, wv, w_gate, w_up, lm_head) split their
    output dimension on tp, row-parallel ones (wo, w_down) their input one;
    the embedding table splits the vocabulary on tp. FSDP splits the other
    dimension, and the norm weights, on fsdp.
    """
    column, row = P(fsdp, tp), P(tp, fsdp)
    layer = {"attn_norm": P(fsdp), "wq": column, "wk": column, "wv": column,
             "wo": row, "mlp_norm": P(fsdp), "w_gate": column,
             "w_up": column, "w_down": row}
    return {
        "embed": P(tp, fsdp),
        "layers": [dict(layer) for _ in range(N_LAYERS)],
        "final_norm": P(fsdp),
        "lm_head": column,
    }


def mesh_setup(kind):
    """(mesh, parameter specs, batch spec, rope-table spec) for --mesh kind."""
    devices = jax.devices()
    if kind == "fsdp_tp":
        axes, shape = ("fsdp", "tp"), (2, 4)
        params, batch, rope = megatron_specs("fsdp", "tp"), P("fsdp"), P()
    elif kind == "dp":
        axes, shape = ("dp",), (8,)
        params, batch, rope = megatron_specs(None, None), P("dp"), P()
    elif kind == "fsdp":
        axes, shape = ("fsdp",), (8,)
        # Every parameter split on its first dimension (all are 8-divisible).
        params = jax.tree.map(lambda s: P("fsdp"), param_shapes(),
                              is_leaf=lambda x: isinstance(x, tuple))
        batch, rope = P("fsdp"), P()
    elif kind == "tp":
        axes, shape = ("tp",), (N_HEADS,)  # one head per device
        params, batch, rope = megatron_specs(None, "tp"), P(), P()
    elif kind == "dp_tp_sp":
        axes, shape = ("dp", "tp", "sp"), (2, 2, 2)
        params = megatron_specs(None, "tp")
        batch, rope = P("dp", "sp"), P("sp")  # sequence split on sp
    else:
        raise SystemExit("unknown --mesh " + kind)
    size = int(np.prod(shape))
    mesh = Mesh(np.array(devices[:size]).reshape(shape), axes)
    return mesh, params, batch, rope


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mesh", nargs="*", default=["fsdp_tp", "dp_tp_sp"],
                        choices=["fsdp_tp", "dp", "fsdp", "tp", "dp_tp_sp"])
    for kind in parser.parse_args().mesh:
        export(kind)


def export(kind):
    mesh, param_specs, batch_spec, rope_spec = mesh_setup(kind)
    f32 = jnp.float32
    params = jax.tree.map(lambda s: jax.ShapeDtypeStruct(s, f32),
                          param_shapes(),
                          is_leaf=lambda x: isinstance(x, tuple))
    one_hot = jax.ShapeDtypeStruct((BATCH, SEQ, VOCAB), f32)
    rope_table = jax.ShapeDtypeStruct((SEQ, HEAD_DIM), f32)
    args = (params, params, params, one_hot, one_hot, rope_table, rope_table)
    in_specs = (param_specs, param_specs, param_specs, batch_spec, batch_spec,
                rope_spec, rope_spec)
    out_specs = (param_specs, param_specs, param_specs, P())
    parity_jax.export(llama_step, args, mesh, in_specs, out_specs,
                      name="llama_step_" + kind)


if __name__ == "__main__":
    main()
