"""Export a JAX training step as a parity spec/plan pair of HLO text files.

Import this module at the top of the JAX script, before anything makes jax
start its backends (before ``jax.devices()``, ``jax.make_mesh`` or the first
computation): on import it sets ``XLA_FLAGS`` so that XLA

* dumps every module it compiles, and the module right after the SPMD
  partitioner, to a dump directory (``--xla_dump_to``,
  ``--xla_dump_hlo_pass_re=spmd-partitioning``), and
* simulates several host (CPU) devices
  (``--xla_force_host_platform_device_count``).

Environment variables read on import:

``PARITY_JAX_DUMP``
    The dump directory (default: a fresh temporary directory, removed when
    the process exits). Ignored when ``XLA_FLAGS`` already names one with
    ``--xla_dump_to``.
``PARITY_JAX_DEVICES``
    How many CPU devices XLA simulates (default 8). Ignored when ``XLA_FLAGS``
    already has ``--xla_force_host_platform_device_count``.

and by :func:`export`:

``PARITY_JAX_OUT``
    Where the exported files go when ``out_dir`` is not given (default: the
    current directory).

Then call :func:`export` once with the step function, example arguments, the
mesh and the shardings. It compiles the step twice and writes two files:

``<name>.spec.hlo``
    The step compiled on a one-device mesh with the same axis names, as XLA
    received it (the ``before_optimizations`` dump): the single-device
    meaning of the program.
``<name>.plan.hlo``
    A header of ``// parity-...`` comment lines, then the per-device program
    that XLA's SPMD partitioner made for the real mesh (the
    ``after_spmd-partitioning`` dump). The header lines are::

        // parity-mesh: dp=2 tp=4
        // parity-source: /abs/path/of/the/calling/script.py
        // parity-arg 0: {devices=[2,1,4]<=[8] last_tile_dim_replicate}
        // parity-result 0: {replicated}

    ``parity-mesh`` gives each mesh axis as ``name=size`` in mesh order (the
    partitioned module itself names them ``axis_0``, ``axis_1``, ... in that
    order). There is one ``parity-arg`` line per flattened argument and one
    ``parity-result`` line per flattened result, in order, each with the HLO
    sharding of that value as XLA prints it. Partition ``i`` of the plan runs
    on ``mesh.devices.flat[i]``; :func:`export` checks this.

The module depends on jax (and numpy, which jax needs) only.
"""

import atexit
import os
import re
import shutil
import sys
import tempfile

__all__ = ["export", "dump_dir", "ParityJaxError"]


class ParityJaxError(RuntimeError):
    """Raised when a step cannot be exported."""


# ---------------------------------------------------------------------------
# XLA flags, set on import.

def _flag_value(flags, name):
    """The value of ``--name=value`` in an XLA_FLAGS string, or None."""
    found = None
    for word in flags.split():
        if word.startswith("--" + name + "="):
            found = word.split("=", 1)[1]
    return found


def _has_flag(flags, name):
    return any(word == "--" + name or word.startswith("--" + name + "=")
               for word in flags.split())


def _backends_initialized():
    """Whether jax has already created its backends (and read XLA_FLAGS)."""
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import xla_bridge
        return bool(xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError):
        # An unknown jax: assume the worst only if it ever made a backend.
        return bool(getattr(sys.modules.get("jax._src.xla_bridge"),
                            "_backends", None))


def _setup_flags():
    """Add the flags parity needs to XLA_FLAGS; return (dump dir, problem).

    ``problem`` is None, or a sentence saying why the flags cannot apply.
    """
    original = os.environ.get("XLA_FLAGS", "")
    words = original.split()
    dump = _flag_value(original, "xla_dump_to")
    added_dump_flags = False
    if dump is None:
        dump = os.environ.get("PARITY_JAX_DUMP")
        if not dump:
            # A directory of our own: removed when the process exits.
            dump = tempfile.mkdtemp(prefix="parity_jax_dump_")
            atexit.register(shutil.rmtree, dump, ignore_errors=True)
        words.append("--xla_dump_to=" + dump)
        added_dump_flags = True
    if not _has_flag(original, "xla_dump_hlo_pass_re"):
        words.append("--xla_dump_hlo_pass_re=spmd-partitioning")
        added_dump_flags = True
    if not _has_flag(original, "xla_force_host_platform_device_count"):
        count = os.environ.get("PARITY_JAX_DEVICES", "8")
        words.append("--xla_force_host_platform_device_count=" + count)
    os.environ["XLA_FLAGS"] = " ".join(words)
    problem = None
    if _backends_initialized() and added_dump_flags:
        problem = ("jax had already initialized its backends when parity_jax "
                   "was imported, so the XLA dump flags it sets cannot apply: "
                   "`import parity_jax` at the top of the script, before "
                   "using jax (jax.devices(), jax.make_mesh, any computation)")
    return os.path.abspath(dump), problem


_DUMP_DIR, _FLAGS_PROBLEM = _setup_flags()


def dump_dir():
    """The directory XLA dumps its modules to."""
    return _DUMP_DIR


# ---------------------------------------------------------------------------
# Helpers for export.

def _caller_source():
    """Absolute path of the script that called export (or sys.argv[0])."""
    path = sys._getframe(2).f_code.co_filename
    if os.path.isfile(path):
        return os.path.abspath(path)
    script = sys.argv[0] if sys.argv else ""
    if script and os.path.isfile(script):
        return os.path.abspath(script)
    return path  # "<stdin>", "<string>": there is no file


def _abstract(args):
    """The arguments as plain ShapeDtypeStructs (no shardings attached)."""
    import jax
    import numpy as np

    def one(a):
        if isinstance(a, jax.ShapeDtypeStruct):
            return jax.ShapeDtypeStruct(a.shape, a.dtype)
        return jax.ShapeDtypeStruct(np.shape(a), jax.numpy.result_type(a))

    return jax.tree.map(one, args)


def _to_specs(specs):
    """Replace each NamedSharding in a pytree of shardings by its spec."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    def is_leaf(x):
        return x is None or isinstance(x, (PartitionSpec, NamedSharding))

    def one(x):
        if isinstance(x, NamedSharding):
            return x.spec
        if x is None or isinstance(x, PartitionSpec):
            return x
        raise ParityJaxError(
            "export: in_specs/out_specs must hold PartitionSpecs or "
            "NamedShardings, got %r" % (x,))

    return jax.tree.map(one, specs, is_leaf=is_leaf)


def _on_mesh(specs, mesh):
    """NamedShardings on ``mesh`` for a pytree of PartitionSpecs."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    def is_leaf(x):
        return x is None or isinstance(x, PartitionSpec)

    return jax.tree.map(
        lambda s: None if s is None else NamedSharding(mesh, s),
        specs, is_leaf=is_leaf)


def _one_device_mesh(mesh):
    """A mesh on mesh's first device with the same axis names, each size 1."""
    import numpy as np
    from jax.sharding import Mesh

    devices = np.array(mesh.devices.flat[:1]).reshape((1,) * mesh.devices.ndim)
    axis_types = getattr(mesh, "axis_types", None)
    if axis_types is not None:
        return Mesh(devices, mesh.axis_names, axis_types=axis_types)
    return Mesh(devices, mesh.axis_names)


def _listing():
    """{file name: (mtime in ns, size)} of the dump directory."""
    found = {}
    try:
        names = os.listdir(_DUMP_DIR)
    except FileNotFoundError:
        return found
    for name in names:
        try:
            st = os.stat(os.path.join(_DUMP_DIR, name))
        except FileNotFoundError:
            continue
        found[name] = (st.st_mtime_ns, st.st_size)
    return found


def _written_since(before):
    """Names of the dump files made or rewritten since the listing before.

    XLA numbers its modules from module_0000 in each process, so a dump
    directory used by an earlier run gets its files overwritten, not added.
    """
    return [name for name, stamp in _listing().items()
            if before.get(name) != stamp]


def _no_dump_error(what, module_name):
    return ParityJaxError(
        "export: XLA wrote no %s file for %s into the dump directory %s. "
        "Either the compile was served from a cache (jax's persistent "
        "compilation cache, or an earlier identical compile) or XLA_FLAGS "
        "did not apply (import parity_jax before using jax; XLA_FLAGS is %r)"
        % (what, module_name, _DUMP_DIR, os.environ.get("XLA_FLAGS", "")))


_MODULE_PREFIX = re.compile(r"^(module_\d+)\.")


def _compile_and_find(step, abstract_args, mesh, in_specs, out_specs, marker):
    """Compile ``step`` on ``mesh``; return (compiled, text of the new dump
    file whose name has ``marker`` in it)."""
    import jax

    name = getattr(step, "__name__", "step")
    in_shardings = _on_mesh(in_specs, mesh)
    out_shardings = _on_mesh(out_specs, mesh)
    jax.clear_caches()
    before = _listing()
    cache_flag = "jax_enable_compilation_cache"
    cache_was = getattr(jax.config, cache_flag, None)
    if cache_was:
        jax.config.update(cache_flag, False)
    try:
        with jax.set_mesh(mesh):
            jitted = jax.jit(step, in_shardings=in_shardings,
                             out_shardings=out_shardings, keep_unused=True)
            compiled = jitted.lower(*abstract_args).compile()
    except ValueError as e:
        if "should match the mesh passed to shard_map" not in str(e):
            raise
        # jax.shard_map without a mesh argument remembers the first context
        # mesh its wrapper is called under; the second compile then fails.
        raise ParityJaxError(
            "export: a jax.shard_map wrapper made once (at module level, say) "
            "stays bound to the first mesh it ran under, so it cannot be "
            "compiled again on the one-device mesh. Call jax.shard_map inside "
            "the step function, so that each trace makes a fresh wrapper "
            "(jax said: %s)" % str(e).splitlines()[0]) from e
    finally:
        if cache_was:
            jax.config.update(cache_flag, cache_was)
    new = sorted(f for f in _written_since(before)
                 if marker in f and f.endswith(".txt"))
    # XLA names the module jit_<function name>, made safe for file names.
    wanted = "jit_" + re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    named = [f for f in new if wanted in f]
    if named:
        new = named
    modules = sorted({_MODULE_PREFIX.match(f).group(1) for f in new
                      if _MODULE_PREFIX.match(f)})
    if not new:
        raise _no_dump_error("'*%s*'" % marker, wanted)
    if len(modules) > 1:
        raise ParityJaxError(
            "export: compiling %s made several modules with '%s' dumps (%s); "
            "expected one" % (wanted, marker, ", ".join(new)))
    # Within the module, files are numbered by pass; take the last one.
    with open(os.path.join(_DUMP_DIR, new[-1])) as f:
        return compiled, f.read()


def _sharding_strings(shardings, avals):
    """HLO text of each flattened sharding, given the matching values."""
    import jax

    flat_shardings = jax.tree.leaves(shardings)
    flat_avals = jax.tree.leaves(avals)
    if len(flat_shardings) != len(flat_avals):
        raise ParityJaxError(
            "export: %d shardings for %d values"
            % (len(flat_shardings), len(flat_avals)))
    return [str(s._to_xla_hlo_sharding(len(a.shape)))
            for s, a in zip(flat_shardings, flat_avals)]


def _check_device_order(compiled, mesh):
    """Raise unless partition i runs on mesh.devices.flat[i]."""
    want = [d.id for d in mesh.devices.flat]
    got = None
    try:
        got = [d.id for d in compiled.runtime_executable().local_devices()]
    except AttributeError:
        device_list = getattr(getattr(compiled, "_executable", None),
                              "_unloaded_executable", None)
        device_list = getattr(device_list, "device_list", None)
        if device_list is not None:
            got = [d.id for d in device_list]
    if got is None:
        raise ParityJaxError(
            "export: cannot read the compiled device assignment from this "
            "jax version")
    if got != want:
        raise ParityJaxError(
            "export: the compiled device assignment %s differs from the "
            "mesh's device order %s; partition i must run on "
            "mesh.devices.flat[i]" % (got, want))


# ---------------------------------------------------------------------------
# The entry point.

def export(step, args, mesh, in_specs, out_specs, name=None, out_dir=None):
    """Export ``step`` as ``<name>.spec.hlo`` and ``<name>.plan.hlo``.

    Arguments:
      step: the Python function to export (a training step, say).
      args: a tuple of the step's positional arguments: arrays or
        ``jax.ShapeDtypeStruct`` (pytrees of them allowed); only their
        shapes and dtypes are used.
      mesh: the ``jax.sharding.Mesh`` to partition the step over.
      in_specs: one ``PartitionSpec`` (or ``NamedSharding``, whose ``.spec``
        is taken) per argument, as a pytree matching ``args``.
      out_specs: the same for the step's results.
      name: the base name of the files (default: ``step.__name__``).
      out_dir: where to write them (default: env ``PARITY_JAX_OUT``, else the
        current directory).

    The plan is ``step`` compiled with ``jax.jit`` on ``mesh`` and taken right
    after XLA's SPMD partitioner; the spec is ``step`` compiled on a one-device
    mesh with the same axis names and specs, as XLA received it. Both compiles
    run inside ``jax.set_mesh``, so ``jax.shard_map`` without a mesh argument
    uses the mesh in question.

    Returns (spec path, plan path). Raises ParityJaxError when the files
    cannot be made.
    """
    import jax

    if _FLAGS_PROBLEM:
        raise ParityJaxError("export: " + _FLAGS_PROBLEM)
    if not isinstance(args, (tuple, list)):
        args = (args,)
    args = tuple(args)
    if name is None:
        name = getattr(step, "__name__", None) or "step"
    if out_dir is None:
        out_dir = os.environ.get("PARITY_JAX_OUT") or os.getcwd()
    source = _caller_source()

    abstract_args = _abstract(args)
    in_specs = _to_specs(in_specs)
    out_specs = _to_specs(out_specs)

    # (a) The plan: the partitioned per-device program on the real mesh.
    compiled, plan_text = _compile_and_find(
        step, abstract_args, mesh, in_specs, out_specs,
        "after_spmd-partitioning")
    _check_device_order(compiled, mesh)
    arg_shardings = _sharding_strings(compiled.input_shardings[0],
                                      abstract_args)
    result_shardings = _sharding_strings(compiled.output_shardings,
                                         compiled.out_info)

    # (b) The spec: the same step on one device.
    _, spec_text = _compile_and_find(
        step, abstract_args, _one_device_mesh(mesh), in_specs, out_specs,
        "before_optimizations")

    # (c) The files.
    header = ["// parity-mesh: " + " ".join(
        "%s=%d" % (axis, size) for axis, size in mesh.shape.items())]
    header.append("// parity-source: " + source)
    header += ["// parity-arg %d: %s" % (i, s)
               for i, s in enumerate(arg_shardings)]
    header += ["// parity-result %d: %s" % (i, s)
               for i, s in enumerate(result_shardings)]
    os.makedirs(out_dir, exist_ok=True)
    spec_path = os.path.abspath(os.path.join(out_dir, name + ".spec.hlo"))
    plan_path = os.path.abspath(os.path.join(out_dir, name + ".plan.hlo"))
    with open(spec_path, "w") as f:
        f.write(spec_text)
    with open(plan_path, "w") as f:
        f.write("\n".join(header) + "\n" + plan_text)
    print("parity_jax: wrote " + plan_path)
    return spec_path, plan_path
