// expect-cmd: verify-mlir
// expect-exit: 2
// expect-error: no func.func with a body
// An empty module: nothing to verify, INVALID (was UNKNOWN: 'the module has no shard.grid').
