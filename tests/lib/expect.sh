# Shared by the shell tests (source it): `expect` runs a command and checks its
# exit code and a piece of its output; `mpi_setup` finds mpirun (exit 77, skip,
# without it) and sets `mpi` for two oversubscribed processes; `pty_setup` skips
# (exit 0, saying so) where script(1) cannot give a pseudo-terminal. A test ends
# with `exit $fail`.
fail=0

# expect NAME WANT_EXIT WANT_TEXT CMD...   (EXPECT_TIMEOUT seconds, default 300)
expect() {
  local name=$1 want=$2 text=$3 out rc
  shift 3
  out=$(timeout "${EXPECT_TIMEOUT:-300}" "$@" 2>&1)
  rc=$?
  if [ "$rc" != "$want" ] || ! grep -qF -- "$text" <<< "$out"; then
    echo "FAIL $name: exit $rc (want $want, text '$text'), output:"
    echo "$out" | sed 's/^/  /'
    fail=1
  else
    echo "ok   $name (exit $rc)"
  fi
}

mpi_setup() {
  command -v mpirun > /dev/null || { echo "SKIP: no mpirun"; exit 77; }
  mpi=(mpirun --oversubscribe --allow-run-as-root -np 2)
  # Open MPI inside containers: no shared-memory CMA, loopback TCP only.
  export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl_tcp_if_include=lo
}

pty_setup() {
  command -v script > /dev/null || { echo "script(1) is not installed: skipped"; exit 0; }
  script -qec true /dev/null > /dev/null 2>&1 || { echo "no pseudo-terminal here: skipped"; exit 0; }
}
