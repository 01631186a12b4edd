// jemalloc's options, read from this symbol when the allocator starts. A plan
// of a few hundred MB is built from millions of small allocations; backing the
// heap with transparent huge pages and never handing freed pages back (the
// process is short-lived) removes most first-touch page faults, which were
// about a third of `parity verify`'s time on a 126-layer plan. The environment
// variable MALLOC_CONF still overrides these.
extern "C" {
// NOLINTNEXTLINE: the name is jemalloc's
const char* malloc_conf = "thp:always,metadata_thp:always,dirty_decay_ms:-1,muzzy_decay_ms:-1";
}
