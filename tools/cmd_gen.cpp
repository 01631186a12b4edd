#include <fmt/format.h>

#include "tools/cli.h"

namespace parity::cli {

void add_gen(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("gen", "(not yet available in this build)");
  static std::vector<std::string> args;
  cmd->add_option("args", args);
  cmd->allow_extras();
  cmd->callback([&run] {
    run = [] {
      fmt::print(stderr, "parity gen: not available in this build yet\n");
      return int(kUnknown);
    };
  });
}

}  // namespace parity::cli
