#!/usr/bin/env python3
"""A campaign over XLA's SPMD partitioner: random JAX programs, random
shardings, each partitioned program checked by `parity verify`.

  scripts/jax-campaign.py PARITY --count N [--seed S] [--out DIR] [--python-only]

Run it with a python that has jax (the frontend's venv); it puts
`frontend/jax` on sys.path itself. Each program is drawn from the seed and
its number alone (program 3 of seed 1 is the same whatever --count), from
these kinds, in float32 with small dims (2, 4, 6, 8, 12, 16) and only the
operations parity reads:

  matmul_chain  2-4 matmuls (`@` or einsum, rank-2 or rank-3 activations),
                elementwise ops, biases or a second operand between them
  reduction     sum / mean / max over random axes after an elementwise op,
                or a normalisation ((x - mean) / sqrt(var + 1))
  reshape       a chain of dim splits, dim merges, transposes, elementwise ops
  slice_pad     slices x[:, :k], zero pads, concatenates, elementwise ops
  mlp           an MLP forward, squared-error loss, jax.grad, an SGD step
  softmax       exp(x - stop_gradient(max)) / sum, alone, as attention, or as
                a cross-entropy loss with its gradient and an SGD step

Meshes: the 8 CPU devices as (8,), (2,4), (4,2) or (2,2,2) with axes a, b, c.
Each input gets a random PartitionSpec (a dim is unsplit, split over one axis
or over a tuple of axes, each axis used once, only where the dim divides);
the outputs are replicated (P()) or get random specs too (the MLP's updated
weights sometimes keep their input specs).

Every program is exported with parity_jax.export into --out (default: a new
temporary directory, removed at the end if every program verified) as
pNNN_KIND.spec.hlo / .plan.hlo, with pNNN_KIND.program.txt describing it,
then checked with `PARITY verify` (120 s limit). Prints the table, the
counts and, for each program not VERIFIED, the program and the first lines
of parity's output. With --python-only the programs are only exported
(PARITY may then be omitted): a check of the generator and of XLA.

On correct XLA output a MISMATCH or INVALID is a false verdict of parity (or
an XLA bug): the exit status is 1 when one occurred, or when parity crashed;
UNKNOWN, timeouts and failed exports are listed but exit 0.
"""
import argparse
import contextlib
import io
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "frontend", "jax"))
import parity_jax  # noqa: E402  (first of jax: it sets XLA_FLAGS)

try:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    from jax.sharding import Mesh, PartitionSpec as P
except ImportError as e:
    sys.exit("jax-campaign: %s; run it with a python that has jax "
             "(the frontend's venv)" % e)

DIMS = (2, 4, 6, 8, 12, 16)
MESHES = ((8,), (2, 4), (4, 2), (2, 2, 2))
AXIS_NAMES = ("a", "b", "c")
F32 = jnp.float32
LR = 0.1
TIMEOUT = 120
EXIT_VERDICT = {0: "VERIFIED", 1: "MISMATCH", 2: "INVALID", 3: "UNKNOWN"}

# Elementwise ops on one value, each defined for every float input (the
# denominators and logarithm arguments are >= 1, exp sees a bounded value).
UNARY = (
    ("tanh({})", jnp.tanh),
    ("sigmoid({})", jax.nn.sigmoid),
    ("exp(tanh({}))", lambda h: jnp.exp(jnp.tanh(h))),
    ("sqrt({0}*{0} + 1)", lambda h: jnp.sqrt(h * h + 1.0)),
    ("log({0}*{0} + 1)", lambda h: jnp.log(h * h + 1.0)),
    ("{0} / ({0}*{0} + 1)", lambda h: h / (h * h + 1.0)),
    ("{0}*{0} - {0}", lambda h: h * h - h),
    ("0.5*{} + 1", lambda h: 0.5 * h + 1.0),
)

# Elementwise ops on two values of one shape.
BINARY = (
    ("{} + {}", lambda h, y: h + y),
    ("{} - {}", lambda h, y: h - y),
    ("{} * {}", lambda h, y: h * y),
    ("{0} / ({1}*{1} + 1)", lambda h, y: h / (y * y + 1.0)),
)


# ---------------------------------------------------------------------------
# A program: its inputs, a list of steps, each a named value computed by a
# function of earlier values, and a text for each step.

class Program:
    def __init__(self, kind, rng):
        self.kind = kind
        self.rng = rng
        self.inputs = []        # names, in argument order
        self.avals = {}         # name -> its ShapeDtypeStruct (or a pytree of them)
        self.steps = []         # (name, function, operand names)
        self.text = []
        self.outputs = []
        self.weights = {}       # output name -> input whose spec it may keep

    def input(self, shape):
        name = "x%d" % len(self.inputs)
        self.inputs.append(name)
        self.avals[name] = jax.ShapeDtypeStruct(tuple(shape), F32)
        return name

    def shape(self, name):
        return tuple(self.avals[name].shape)

    def let(self, text, fn, *operands):
        """A new value fn(*operands); text has a {} per operand."""
        name = "h%d" % len(self.steps)
        self.avals[name] = jax.eval_shape(fn, *[self.avals[o] for o in operands])
        self.steps.append((name, fn, operands))
        self.text.append("%s = %s" % (name, text.format(*operands)))
        return name

    def unary(self, h):
        text, fn = self.rng.choice(UNARY)
        return self.let(text, fn, h)

    def binary(self, h):
        """h combined with a new input of its shape."""
        text, fn = self.rng.choice(BINARY)
        return self.let(text, fn, h, self.input(self.shape(h)))

    def function(self, name):
        inputs, steps, outputs = list(self.inputs), list(self.steps), list(self.outputs)

        def step(*args):
            env = dict(zip(inputs, args))
            for value, fn, operands in steps:
                env[value] = fn(*[env[o] for o in operands])
            return tuple(env[o] for o in outputs)

        step.__name__ = name
        step.__qualname__ = name
        return step

    def describe(self):
        lines = ["%s: f32%s" % (n, list(self.shape(n))) for n in self.inputs]
        lines += self.text
        lines.append("return " + ", ".join(self.outputs))
        return lines


def pick(rng, values, weights):
    return rng.choices(values, weights=weights)[0]


# ---------------------------------------------------------------------------
# The kinds of program.

def gen_matmul_chain(pr):
    rng = pr.rng
    n = rng.randint(2, 4)
    dims = [rng.choice(DIMS) for _ in range(n + 1)]
    lead = [rng.choice(DIMS)]
    if rng.random() < 0.35:
        lead.append(rng.choice(DIMS))
    h = pr.input(lead + [dims[0]])
    for i in range(n):
        form = pick(rng, ("@", "einsum", "@T"), (3, 2, 1))
        if form == "@":
            w = pr.input((dims[i], dims[i + 1]))
            h = pr.let("{} @ {}", lambda a, b: a @ b, h, w)
        elif form == "einsum":
            w = pr.input((dims[i], dims[i + 1]))
            if len(lead) == 1:
                h = pr.let("einsum('bi,ij->bj', {}, {})",
                           lambda a, b: jnp.einsum("bi,ij->bj", a, b), h, w)
            else:
                h = pr.let("einsum('bsi,ij->bsj', {}, {})",
                           lambda a, b: jnp.einsum("bsi,ij->bsj", a, b), h, w)
        else:
            w = pr.input((dims[i + 1], dims[i]))
            h = pr.let("{} @ {}.T", lambda a, b: a @ b.T, h, w)
        if i < n - 1 or rng.random() < 0.5:
            between = pick(rng, ("unary", "bias", "binary"), (3, 1, 1))
            if between == "unary":
                h = pr.unary(h)
            elif between == "bias":
                b = pr.input((dims[i + 1],))
                h = pr.let("{} + {}", lambda a, c: a + c, h, b)
            else:
                h = pr.binary(h)
    pr.outputs.append(h)
    if rng.random() < 0.3:
        pr.outputs.append(pr.let("mean({})", jnp.mean, h))


def gen_reduction(pr):
    rng = pr.rng
    rank = rng.randint(1, 3)
    shape = [rng.choice(DIMS) for _ in range(rank)]
    h = pr.input(shape)
    if rng.random() < 0.4:
        h = pr.binary(h)
    if rank >= 2 and rng.random() < 0.35:
        # A normalisation over the last axis.
        m = pr.let("mean({}, axis=-1, keepdims=True)",
                   lambda a: jnp.mean(a, axis=-1, keepdims=True), h)
        d = pr.let("{} - {}", lambda a, b: a - b, h, m)
        v = pr.let("mean({0}*{0}, axis=-1, keepdims=True)",
                   lambda a: jnp.mean(a * a, axis=-1, keepdims=True), d)
        h = pr.let("{} / sqrt({} + 1)", lambda a, b: a / jnp.sqrt(b + 1.0), d, v)
        if rng.random() < 0.5:
            g = pr.input((shape[-1],))
            h = pr.let("{} * {}", lambda a, b: a * b, h, g)
        pr.outputs.append(h)
        if rng.random() < 0.5:
            pr.outputs.append(pr.let("sum({})", jnp.sum, h))
        return
    if rng.random() < 0.8:
        h = pr.unary(h)
    for _ in range(2 if rank >= 2 and rng.random() < 0.3 else 1):
        rank_now = len(pr.shape(h))
        if rank_now == 0:
            break
        k = rng.randint(1, rank_now)
        axes = tuple(sorted(rng.sample(range(rank_now), k)))
        keep = rng.random() < 0.3
        op = pick(rng, ("sum", "mean", "max"), (2, 2, 1))
        fn = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max}[op]
        h = pr.let("%s({}, axis=%s%s)" % (op, axes, ", keepdims=True" if keep else ""),
                   lambda a, fn=fn, axes=axes, keep=keep: fn(a, axis=axes, keepdims=keep),
                   h)
        if rng.random() < 0.4:
            h = pr.unary(h)
    pr.outputs.append(h)


SPLITS = {4: ((2, 2),), 6: ((2, 3), (3, 2)), 8: ((2, 4), (4, 2)),
          12: ((2, 6), (3, 4), (4, 3), (6, 2)), 16: ((2, 8), (4, 4), (8, 2))}


def reshape_step(pr, h, op):
    """One reshape-chain step on h; None when op does not apply."""
    rng = pr.rng
    shape = list(pr.shape(h))
    if op == "split":
        dims = [d for d, v in enumerate(shape) if v in SPLITS]
        if not dims or len(shape) >= 4:
            return None
        d = rng.choice(dims)
        p, q = rng.choice(SPLITS[shape[d]])
        new = tuple(shape[:d] + [p, q] + shape[d + 1:])
        return pr.let("reshape({}, %s)" % (new,), lambda a, new=new: a.reshape(new), h)
    if op == "merge":
        if len(shape) < 2:
            return None
        d = rng.randrange(len(shape) - 1)
        new = tuple(shape[:d] + [shape[d] * shape[d + 1]] + shape[d + 2:])
        return pr.let("reshape({}, %s)" % (new,), lambda a, new=new: a.reshape(new), h)
    if op == "transpose":
        if len(shape) < 2:
            return None
        perm = list(range(len(shape)))
        while perm == sorted(perm):
            rng.shuffle(perm)
        perm = tuple(perm)
        return pr.let("transpose({}, %s)" % (perm,),
                      lambda a, perm=perm: jnp.transpose(a, perm), h)
    if op == "unary":
        return pr.unary(h)
    if op == "binary":
        return pr.binary(h)
    raise AssertionError(op)


def gen_reshape(pr):
    rng = pr.rng
    rank = rng.randint(2, 3)
    h = pr.input([rng.choice(DIMS) for _ in range(rank)])
    n = rng.randint(2, 4)
    ops = [rng.choice(("split", "merge")), "transpose"]
    ops += [pick(rng, ("split", "merge", "transpose", "unary", "binary"), (2, 2, 2, 2, 1))
            for _ in range(n - 2)]
    rng.shuffle(ops)
    for op in ops:
        h2 = reshape_step(pr, h, op)
        if h2 is None:
            h2 = reshape_step(pr, h, "split" if len(pr.shape(h)) < 2 else "transpose")
        h = h2 if h2 is not None else pr.unary(h)
    pr.outputs.append(h)


def gen_slice_pad(pr):
    rng = pr.rng
    rank = rng.randint(2, 3)
    h = pr.input([rng.choice(DIMS) for _ in range(rank)])
    n = rng.randint(2, 3)
    ops = [rng.choice(("slice", "pad", "concat"))]
    ops += [pick(rng, ("slice", "pad", "concat", "unary"), (2, 2, 2, 1)) for _ in range(n - 1)]
    for op in ops:
        shape = pr.shape(h)
        axis = rng.randrange(len(shape))
        where = ":, " * axis
        if op == "slice" and shape[axis] >= 2:
            k = rng.randint(1, shape[axis] - 1)
            start = rng.randint(0, shape[axis] - k) if rng.random() < 0.3 else 0
            h = pr.let("{}[%s%s:%d]" % (where, start or "", start + k),
                       lambda a, s=start, k=k, ax=axis: lax.slice_in_dim(a, s, s + k, axis=ax),
                       h)
        elif op == "pad":
            lo, hi = rng.randint(0, 2), rng.randint(0, 2)
            if lo == hi == 0:
                hi = 1
            widths = tuple((lo, hi) if d == axis else (0, 0) for d in range(len(shape)))
            h = pr.let("pad({}, %s)" % (widths,),
                       lambda a, w=widths: jnp.pad(a, w), h)
        elif op == "concat":
            if rng.random() < 0.5:
                other_shape = list(shape)
                other_shape[axis] = rng.choice(DIMS)
                other = pr.input(other_shape)
                h = pr.let("concatenate([{}, {}], axis=%d)" % axis,
                           lambda a, b, ax=axis: jnp.concatenate([a, b], axis=ax), h, other)
            else:
                text, fn = rng.choice(UNARY)
                h = pr.let("concatenate([{0}, %s], axis=%d)" % (text.format("{0}"), axis),
                           lambda a, fn=fn, ax=axis: jnp.concatenate([a, fn(a)], axis=ax), h)
        else:
            h = pr.unary(h)
    if rng.random() < 0.4:
        h = pr.unary(h)
    pr.outputs.append(h)


def gen_mlp(pr):
    rng = pr.rng
    layers = rng.randint(2, 3)
    dims = [rng.choice(DIMS) for _ in range(layers + 1)]
    batch = rng.choice(DIMS)
    biases = rng.random() < 0.4
    act_name, act = rng.choice((("tanh", jnp.tanh), ("sigmoid", jax.nn.sigmoid)))
    params = []
    for i in range(layers):
        params.append(pr.input((dims[i], dims[i + 1])))
        if biases:
            params.append(pr.input((dims[i + 1],)))
    x = pr.input((batch, dims[0]))
    y = pr.input((batch, dims[-1]))
    per_layer = 2 if biases else 1
    sq_loss = rng.random() < 0.7

    def loss(ps, x, y):
        h = x
        for i in range(layers):
            h = h @ ps[per_layer * i]
            if biases:
                h = h + ps[per_layer * i + 1]
            if i < layers - 1:
                h = act(h)
        d = h - y
        return jnp.mean(d * d) if sq_loss else jnp.mean(jnp.log(d * d + 1.0))

    with_value = rng.random() < 0.5
    np_ = len(params)

    def grads(*a):
        ps = tuple(a[:np_])
        if with_value:
            return jax.value_and_grad(loss)(ps, a[np_], a[np_ + 1])
        return (loss(ps, a[np_], a[np_ + 1]), jax.grad(loss)(ps, a[np_], a[np_ + 1]))

    pr.text.append("# loss(params, x, y): %d layers%s, %s between, %s" % (
        layers, " with biases" if biases else "", act_name,
        "mean((pred - y)^2)" if sq_loss else "mean(log((pred - y)^2 + 1))"))
    ps_text = "(" + ", ".join(["{}"] * np_) + ("," if np_ == 1 else "") + ")"
    lg = pr.let("%s(%s, {}, {})" % ("value_and_grad(loss)" if with_value
                                   else "(loss, grad(loss))", ps_text),
                grads, *(params + [x, y]))
    lv = pr.let("{}[0]", lambda t: t[0], lg)
    for i, p in enumerate(params):
        new = pr.let("{} - %g * {}[1][%d]" % (LR, i),
                     lambda w, t, i=i: w - LR * t[1][i], p, lg)
        pr.outputs.append(new)
        pr.weights[new] = p
    pr.outputs.append(lv)


def softmax_parts(pr, s, axis):
    m = pr.let("stop_gradient(max({}, axis=%d, keepdims=True))" % axis,
               lambda a: lax.stop_gradient(jnp.max(a, axis=axis, keepdims=True)), s)
    e = pr.let("exp({} - {})", lambda a, b: jnp.exp(a - b), s, m)
    z = pr.let("sum({}, axis=%d, keepdims=True)" % axis,
               lambda a: jnp.sum(a, axis=axis, keepdims=True), e)
    return m, e, z


def gen_softmax(pr):
    rng = pr.rng
    variant = pick(rng, ("plain", "attention", "xent_grad"), (2, 2, 2))
    if variant == "plain":
        rank = rng.randint(2, 3)
        s = pr.input([rng.choice(DIMS) for _ in range(rank)])
        if rng.random() < 0.4:
            w = pr.input((pr.shape(s)[-1], rng.choice(DIMS)))
            s = pr.let("{} @ {}", lambda a, b: a @ b, s, w)
        axis = rng.choice((-1, -1, 0)) if rank == 2 else rng.choice((-1, -1, 1))
        _, e, z = softmax_parts(pr, s, axis)
        pr.outputs.append(pr.let("{} / {}", lambda a, b: a / b, e, z))
    elif variant == "attention":
        lead = [rng.choice(DIMS)]
        if rng.random() < 0.5:
            lead.append(rng.choice(DIMS))
        sq, sk, d = rng.choice(DIMS), rng.choice(DIMS), rng.choice(DIMS)
        q = pr.input(lead + [sq, d])
        k = pr.input(lead + [sk, d])
        v = pr.input(lead + [sk, rng.choice(DIMS)])
        spec = "...qd,...kd->...qk"
        s = pr.let("einsum('%s', {}, {}) / %g" % (spec, np.sqrt(d)),
                   lambda a, b: jnp.einsum(spec, a, b) / np.float32(np.sqrt(d)), q, k)
        _, e, z = softmax_parts(pr, s, -1)
        p = pr.let("{} / {}", lambda a, b: a / b, e, z)
        pr.outputs.append(pr.let("einsum('...qk,...kv->...qv', {}, {})",
                                 lambda a, b: jnp.einsum("...qk,...kv->...qv", a, b), p, v))
    else:
        batch, din, classes = rng.choice(DIMS), rng.choice(DIMS), rng.choice(DIMS)
        w = pr.input((din, classes))
        x = pr.input((batch, din))
        y = pr.input((batch, classes))

        def loss(w, x, y):
            s = x @ w
            m = lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True))
            logp = s - m - jnp.log(jnp.sum(jnp.exp(s - m), axis=-1, keepdims=True))
            return -jnp.mean(jnp.sum(y * logp, axis=-1))

        pr.text.append("# loss(w, x, y): s = x @ w; m = stop_gradient(max(s, -1)); "
                       "logp = s - m - log(sum(exp(s - m), -1)); -mean(sum(y * logp, -1))")
        lg = pr.let("value_and_grad(loss)({}, {}, {})",
                    lambda w, x, y: jax.value_and_grad(loss)(w, x, y), w, x, y)
        new = pr.let("{} - %g * {}[1]" % LR, lambda a, t: a - LR * t[1], w, lg)
        pr.outputs += [new, pr.let("{}[0]", lambda t: t[0], lg)]
        pr.weights[new] = w
    pr.kind = "softmax/" + variant


KINDS = {
    "matmul_chain": gen_matmul_chain,
    "reduction": gen_reduction,
    "reshape": gen_reshape,
    "slice_pad": gen_slice_pad,
    "mlp": gen_mlp,
    "softmax": gen_softmax,
}


# ---------------------------------------------------------------------------
# Shardings.

def random_spec(rng, shape, axes, p_none):
    """A PartitionSpec for shape over axes [(name, size)]: each dim unsplit,
    split over one axis or a tuple of axes, each axis at most once, only
    where the dim divides by the product of the sizes."""
    entries = [None] * len(shape)
    used = set()
    order = list(range(len(shape)))
    rng.shuffle(order)
    for d in order:
        if rng.random() < p_none:
            continue
        free = [a for a in axes if a[0] not in used]
        if not free:
            break
        k = min(len(free), pick(rng, (1, 2, 3), (5, 3, 1)))
        chosen = rng.sample(free, k)
        while chosen and shape[d] % int(np.prod([s for _, s in chosen])):
            chosen.pop()
        if not chosen:
            continue
        names = tuple(n for n, _ in chosen)
        entries[d] = names[0] if len(names) == 1 else names
        used.update(names)
    return P(*entries)


def short_spec(spec, rank):
    entries = list(spec) + [None] * (rank - len(spec))
    if all(e is None for e in entries):
        return "R"
    return "[" + ",".join("-" if e is None else (e if isinstance(e, str) else "".join(e))
                          for e in entries) + "]"


# ---------------------------------------------------------------------------
# One program: draw, export, verify.

def draw(seed, index, kind):
    rng = random.Random("%d:%d" % (seed, index))
    mesh_shape = rng.choice(MESHES)
    axes = list(zip(AXIS_NAMES, mesh_shape))
    pr = Program(kind, rng)
    KINDS[kind](pr)
    in_specs = [random_spec(rng, pr.shape(n), axes, p_none=rng.choice((0.3, 0.5)))
                for n in pr.inputs]
    out_mode = pick(rng, ("replicated", "random", "keep"), (2, 3, 2 if pr.weights else 0))
    out_specs = []
    for o in pr.outputs:
        shape = pr.shape(o)
        if out_mode == "keep" and o in pr.weights:
            out_specs.append(in_specs[pr.inputs.index(pr.weights[o])])
        elif out_mode == "replicated" or not shape:
            out_specs.append(P())
        else:
            out_specs.append(random_spec(rng, shape, axes, p_none=0.4))
    return pr, mesh_shape, in_specs, out_specs


def run_one(args, index, kind, out_dir):
    pr, mesh_shape, in_specs, out_specs = draw(args.seed, index, kind)
    name = "p%03d_%s" % (index, kind)
    row = {
        "id": "p%03d" % index,
        "kind": pr.kind,
        "mesh": "x".join(map(str, mesh_shape)),
        "specs": " ".join(short_spec(s, len(pr.shape(n))) for s, n in zip(in_specs, pr.inputs))
        + " -> " + " ".join(short_spec(s, len(pr.shape(o)))
                            for s, o in zip(out_specs, pr.outputs)),
        "program": pr.describe(),
        "lines": [],
    }
    axes = AXIS_NAMES[:len(mesh_shape)]
    with open(os.path.join(out_dir, name + ".program.txt"), "w") as f:
        f.write("# %s (seed %d), mesh %s\n" % (name, args.seed, dict(zip(axes, mesh_shape))))
        f.write("\n".join(row["program"]) + "\n")
        f.write("in_specs: %s\nout_specs: %s\n" % (in_specs, out_specs))
    started = time.time()
    try:
        devices = np.array(jax.devices()[:8]).reshape(mesh_shape)
        mesh = Mesh(devices, axes)
        abstract = tuple(jax.ShapeDtypeStruct(pr.shape(n), F32) for n in pr.inputs)
        quiet = io.StringIO()
        with contextlib.redirect_stdout(quiet):
            spec_path, plan_path = parity_jax.export(
                pr.function(name), abstract, mesh, tuple(in_specs), tuple(out_specs),
                name=name, out_dir=out_dir)
    except Exception as e:  # any failure of jax, XLA or the exporter
        row["export_s"] = time.time() - started
        row["verdict"] = "EXPORT-FAILED"
        row["lines"] = ("%s: %s" % (type(e).__name__, e)).splitlines()[:3]
        return row
    row["export_s"] = time.time() - started
    if args.python_only:
        row["verdict"] = "EXPORTED"
        return row
    started = time.time()
    try:
        done = subprocess.run([args.parity, "verify", spec_path, plan_path],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=TIMEOUT)
        out, rc = done.stdout, done.returncode
        verdict = EXIT_VERDICT.get(rc, "CRASH(rc=%d)" % rc)
        first = out.split(None, 1)[0] if out.split() else ""
        if verdict in EXIT_VERDICT.values() and first != verdict:
            verdict += "?"  # the exit status and the first word disagree
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        verdict = "TIMEOUT"
        out = "timed out after %d s\n%s" % (TIMEOUT, out)
    row["verify_s"] = time.time() - started
    row["verdict"] = verdict
    row["lines"] = out.splitlines()[:3]
    return row


def main():
    ap = argparse.ArgumentParser(
        description="Random JAX programs partitioned by XLA, checked by parity verify.")
    ap.add_argument("parity", nargs="?", help="the parity binary (build/tools/parity)")
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="where the modules go (default: a temporary directory)")
    ap.add_argument("--python-only", action="store_true",
                    help="export the programs only; do not run parity")
    args = ap.parse_args()
    if not args.python_only:
        if not args.parity:
            ap.error("PARITY is needed unless --python-only")
        args.parity = os.path.abspath(args.parity)
        if not os.access(args.parity, os.X_OK):
            ap.error("%s is not an executable" % args.parity)
    if len(jax.devices()) < 8:
        sys.exit("jax-campaign: needs 8 devices, jax has %d (was XLA_FLAGS set "
                 "before parity_jax was imported?)" % len(jax.devices()))
    temporary = args.out is None
    out_dir = tempfile.mkdtemp(prefix="jax-campaign-") if temporary else args.out
    os.makedirs(out_dir, exist_ok=True)

    # Kinds in an order drawn from the seed, cycled: every kind comes up.
    order = sorted(KINDS)
    random.Random("kinds:%d" % args.seed).shuffle(order)
    rows = []
    for i in range(args.count):
        row = run_one(args, i, order[i % len(order)], out_dir)
        rows.append(row)
        print("[%d/%d] %s %-20s %s" % (i + 1, args.count, row["id"], row["kind"],
                                       row["verdict"]), file=sys.stderr, flush=True)

    header = ("id", "kind", "mesh", "shardings (inputs -> outputs)", "verdict",
              "export s", "verify s")
    table = [header] + [(r["id"], r["kind"], r["mesh"], r["specs"], r["verdict"],
                         "%.1f" % r["export_s"],
                         "%.1f" % r["verify_s"] if "verify_s" in r else "-")
                        for r in rows]
    widths = [max(len(t[c]) for t in table) for c in range(len(header))]
    for t in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(t, widths)).rstrip())
    print()

    def count(*verdicts):
        return sum(1 for r in rows if r["verdict"] in verdicts)

    summary = "%d programs: %d VERIFIED, %d MISMATCH, %d UNKNOWN, %d INVALID, %d failed to export" % (
        len(rows), count("VERIFIED"), count("MISMATCH"), count("UNKNOWN"), count("INVALID"),
        count("EXPORT-FAILED"))
    others = [r for r in rows if r["verdict"] not in (
        "VERIFIED", "MISMATCH", "UNKNOWN", "INVALID", "EXPORT-FAILED", "EXPORTED")]
    if args.python_only:
        summary += " (--python-only: %d exported, none verified)" % count("EXPORTED")
    if others:
        summary += ", %d other (%s)" % (len(others), ", ".join(sorted({r["verdict"] for r in others})))
    print(summary)

    flagged = [r for r in rows if r["verdict"] not in ("VERIFIED", "EXPORTED")]
    for r in flagged:
        print()
        print("%s %s on mesh %s: %s" % (r["id"], r["kind"], r["mesh"], r["verdict"]))
        print("  shardings: " + r["specs"])
        for line in r["program"]:
            print("  | " + line)
        for line in r["lines"]:
            print("  > " + line)
    bad = [r for r in rows if r["verdict"] in ("MISMATCH", "INVALID")
           or r["verdict"].startswith("CRASH") or r["verdict"].endswith("?")]
    if temporary and not flagged:
        shutil.rmtree(out_dir, ignore_errors=True)
    else:
        print()
        print("modules in " + out_dir)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
