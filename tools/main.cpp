#include <fmt/format.h>

#include <new>

#include "ir/error.h"
#include "tools/cli.h"

int main(int argc, char** argv) {
  using namespace parity::cli;
  CLI::App app{"parity: verifies that a distributed training plan computes its single-device training step"};
  app.set_version_flag("--version", PARITY_VERSION);
  app.require_subcommand(1);
  Action run;
  add_inspect(app, run);
  add_validate(app, run);
  add_verify(app, run);
  add_gen(app, run);
  add_run(app, run);
  add_explain(app, run);
  add_reduce(app, run);
#ifdef PARITY_HAVE_MLIR
  add_verify_mlir(app, run);
#endif
  add_verify_jax(app, run);
  // CLI11 would report a missing subcommand for a misspelled one.
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      found |= sub->get_name() == argv[1];
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found) {
      fmt::print(stderr, "error: unknown subcommand '{}' (one of: {}; see parity --help)\n", argv[1], known);
      return kInvalid;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kInvalid;
  }
  try {
    return run ? run() : kInvalid;
  } catch (const UnknownInput& e) {
    fmt::print("UNKNOWN  {}\n", e.what());
    return kUnknown;
  } catch (const std::bad_alloc&) {
    fmt::print("UNKNOWN  ran out of memory (tensors too large at the sizes checked; the limit is "
               "PARITY_MAX_MEMORY_GB, default 80% of physical memory)\n");
    return kUnknown;
  } catch (const parity::ir::InvalidInput& e) {
    fmt::print(stderr, "{}", invalid_text({e.diag()}));
    return kInvalid;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kInvalid;
  }
}
