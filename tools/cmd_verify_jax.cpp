// parity verify-jax: runs a JAX script whose `parity_jax.export` calls write
// each step's single-device module and XLA's partitioned module, then proves
// every pair equal (frontend/hlo).
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "frontend/hlo/api.h"
#include "tools/cli.h"
#include "tools/report.h"
#include "tools/report_formats.h"
#include "verify/check.h"

extern char** environ;

namespace parity::cli {

namespace fs = std::filesystem;

namespace {

// The Python that has jax: --python, $PARITY_PYTHON, the build's venv, python3.
std::string pick_python(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* p = std::getenv("PARITY_PYTHON"); p && *p) return p;
#ifdef PARITY_VENV_PYTHON
  if (fs::exists(PARITY_VENV_PYTHON)) return PARITY_VENV_PYTHON;
#endif
  return "python3";
}

// Runs `argv` with `env` added; the exit status, or -1 when it could not start
// or ran past `limit_s` (then it is killed).
int run_script(const std::vector<std::string>& argv, const std::vector<std::string>& env,
               double limit_s, std::string& why) {
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    std::string s = *e;
    bool replaced = false;
    for (const auto& n : env) replaced |= s.compare(0, n.find('=') + 1, n, 0, n.find('=') + 1) == 0;
    if (!replaced) envs.push_back(s);
  }
  envs.insert(envs.end(), env.begin(), env.end());
  std::vector<char*> a, e;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  for (const auto& s : envs) e.push_back(const_cast<char*>(s.c_str()));
  e.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP);  // its own group: killed whole at the limit
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, a[0], nullptr, &attr, a.data(), e.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    why = fmt::format("cannot run {}: {}", argv[0], std::strerror(rc));
    return -1;
  }
  auto start = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit_s) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      why = fmt::format("the script ran past {} s", limit_s);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  why = fmt::format("the script ended by signal {}", WTERMSIG(status));
  return -1;
}

}  // namespace

void add_verify_jax(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("verify-jax",
                                 "run a JAX script that calls parity_jax.export and prove each "
                                 "exported step: XLA's partitioned program equal "
                                 "to the same function on one device");
  static std::string script, python, keep;
  static std::vector<std::string> script_args;
  static double script_limit = 900;
  static verify::VerifyOptions opt;
  cmd->add_option("script", script, "a Python script using parity_jax.export")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("args", script_args, "arguments for the script (after --)");
  cmd->add_option("--python", python,
                  "the Python with jax (default: $PARITY_PYTHON, the build's venv, python3)");
  cmd->add_option("--keep", keep,
                  "write the exported modules to this folder (default: a temporary one, removed)");
  cmd->add_option("--script-time-limit", script_limit, "seconds the script may run")
      ->check(kPositiveTime);
  cmd->add_option("--solver", opt.solver, "z3, cvc5, or both (they must agree)")
      ->check(CLI::IsMember({"z3", "cvc5", "both"}));
  cmd->add_option("--timeout-ms", opt.timeout_ms, "per-obligation solver timeout")
      ->check(kPositiveTime);
  cmd->add_option("--time-limit", opt.time_limit_s, "seconds for each proof (0: none)")
      ->check(number_in(0, 1e7));
  cmd->callback([&run] {
    run = [] {
      limit_memory();
      std::error_code ec;
      fs::path out;
      bool temp = keep.empty();
      if (temp) {
        std::string tmpl = (fs::temp_directory_path() / "parity-jax-XXXXXX").string();
        if (!mkdtemp(tmpl.data())) {
          fmt::print(stderr, "error: cannot make a temporary folder\n");
          return 2;
        }
        out = tmpl;
      } else {
        out = keep;
        fs::create_directories(out, ec);
        if (ec) {
          fmt::print(stderr, "{}: error: cannot create the folder: {}\n", keep, ec.message());
          return 2;
        }
      }
      std::string jaxpath = PARITY_SOURCE_DIR "/frontend/jax";
      if (const char* p = std::getenv("PARITY_JAX_PATH"); p && *p) jaxpath = p;
      std::string pp = jaxpath;
      if (const char* p = std::getenv("PYTHONPATH"); p && *p) pp += std::string(":") + p;
      std::vector<std::string> argv{pick_python(python), script};
      argv.insert(argv.end(), script_args.begin(), script_args.end());
      std::string why;
      int rc = run_script(argv, {"PYTHONPATH=" + pp, "PARITY_JAX_OUT=" + out.string()},
                          script_limit, why);
      auto cleanup = [&] {
        if (temp) fs::remove_all(out, ec);
      };
      if (rc != 0) {
        if (why.empty()) why = fmt::format("the script exited with status {}", rc);
        fmt::print("UNKNOWN  {}: {}\n", script, why);
        cleanup();
        return static_cast<int>(kUnknown);
      }
      std::vector<fs::path> plans;
      for (const auto& e : fs::directory_iterator(out, ec)) {
        std::string n = e.path().filename().string();
        if (n.size() > 9 && n.compare(n.size() - 9, 9, ".plan.hlo") == 0) plans.push_back(e.path());
      }
      std::sort(plans.begin(), plans.end());
      if (plans.empty()) {
        fmt::print("UNKNOWN  {}: the script exported nothing (call parity_jax.export)\n", script);
        cleanup();
        return static_cast<int>(kUnknown);
      }
      int worst = 0;
      auto rank = [](int code) { return code == 0 ? 0 : code == 1 ? 3 : code == 2 ? 2 : 1; };
      for (const auto& plan : plans) {
        std::string stem = plan.string().substr(0, plan.string().size() - 9);
        std::vector<std::string> files{stem + ".spec.hlo", plan.string()};
        std::string label =
            script + ":" + plan.filename().string().substr(0, plan.filename().string().size() - 9);
        int code = 0;
        try {
          ir::Case c;
          verify::Verdict v = load_and_verify(files, opt, c);
          fmt::print(v.kind == verify::VerdictKind::invalid ? stderr : stdout, "{}",
                     verdict_text(v, label, c));
          code = verify::verdict_exit_code(v.kind);
        } catch (const UnknownInput& e) {
          fmt::print("UNKNOWN  {}: {}\n", label, e.what());
          code = static_cast<int>(kUnknown);
        }
        if (rank(code) > rank(worst)) worst = code;
      }
      std::fflush(stdout);
      cleanup();
      return worst;
    };
  });
}

}  // namespace parity::cli
