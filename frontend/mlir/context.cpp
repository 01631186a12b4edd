#include "frontend/mlir/context.h"

#include <regex>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <llvm/Support/MemoryBuffer.h>
#include <mlir/IR/DialectRegistry.h>
#include <mlir/InitAllDialects.h>
#include <mlir/InitAllExtensions.h>
#include <mlir/Parser/Parser.h>

#include "ir/error.h"

namespace parity::frontend::mlirio {

namespace {
constexpr size_t kMaxBytes = size_t{256} << 20;  // same limit as case files

mlir::DialectRegistry make_registry() {
  mlir::DialectRegistry r;
  mlir::registerAllDialects(r);    // includes the sharding interface models
  mlir::registerAllExtensions(r);  // func.return etc. sharding extensions
  return r;
}
}  // namespace

// Threading is disabled: the passes run in a forked child (pipeline.cpp), and a
// thread pool does not survive fork.
Session::Session() : ctx_(make_registry(), mlir::MLIRContext::Threading::DISABLED) {
  ctx_.allowUnregisteredDialects(false);
  handler_ = std::make_unique<mlir::SourceMgrDiagnosticHandler>(sm_, &ctx_, os_);
}

std::string Session::take_diags() {
  os_.flush();
  std::string s = std::move(diags_);
  diags_.clear();
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

mlir::OwningOpRef<mlir::ModuleOp> Session::parse_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ir::InvalidInput(ir::Diag{path, "", "", "", "is a directory; an MLIR module file was expected"});
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ir::InvalidInput(ir::Diag{path, "", "", "", "cannot open file"});
  std::ostringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  if (text.size() > kMaxBytes) throw ir::InvalidInput(ir::Diag{path, "", "", "", "file larger than 256 MiB"});
  sm_.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, path), llvm::SMLoc());
  mlir::ParserConfig config(&ctx_);
  auto m = mlir::parseSourceFile<mlir::ModuleOp>(sm_, config);
  if (!m) {
    std::string d = take_diags();
    if (d.empty()) throw ir::InvalidInput(ir::Diag{path, "", "", "", "cannot parse MLIR"});
    throw ir::InvalidInput(as_diag(d));
  }
  return m;
}

mlir::OwningOpRef<mlir::ModuleOp> Session::parse_text(const std::string& text, const std::string& name) {
  mlir::ParserConfig config(&ctx_);
  auto m = mlir::parseSourceString<mlir::ModuleOp>(text, config, name);
  if (!m) throw ir::InvalidInput(name + ": " + take_diags());
  return m;
}

ir::Diag as_diag(const std::string& text) {
  // MLIR writes `FILE:LINE:COL: error: MESSAGE`, then the source line and a
  // caret: kept as one diagnostic at that position, the source after it.
  static const std::regex head(R"(^(.*):([0-9]+):([0-9]+): error: ([^\n]*)\n?)");
  std::smatch m;
  if (!std::regex_search(text, m, head)) return ir::Diag{"", "", "", "", text};
  ir::Diag d{m[1].str(), "", "", "", m[4].str()};
  d.line = std::stoi(m[2].str()), d.col = std::stoi(m[3].str());
  std::string rest = m.suffix().str();
  while (!rest.empty() && rest.back() == '\n') rest.pop_back();
  if (!rest.empty()) d.message += "\n" + rest;
  return d;
}

std::string loc_str(mlir::Location loc) {
  if (auto fl = mlir::dyn_cast<mlir::FileLineColLoc>(loc))
    return fl.getFilename().str() + ":" + std::to_string(fl.getLine()) + ":" + std::to_string(fl.getColumn());
  if (auto n = mlir::dyn_cast<mlir::NameLoc>(loc)) return loc_str(n.getChildLoc());
  if (auto c = mlir::dyn_cast<mlir::CallSiteLoc>(loc)) return loc_str(c.getCallee());
  if (auto fu = mlir::dyn_cast<mlir::FusedLoc>(loc))
    for (auto l : fu.getLocations())
      if (auto s = loc_str(l); !s.empty()) return s;
  return "";
}

int loc_line(mlir::Location loc) {
  if (auto fl = mlir::dyn_cast<mlir::FileLineColLoc>(loc)) return static_cast<int>(fl.getLine());
  if (auto n = mlir::dyn_cast<mlir::NameLoc>(loc)) return loc_line(n.getChildLoc());
  if (auto fu = mlir::dyn_cast<mlir::FusedLoc>(loc))
    for (auto l : fu.getLocations())
      if (int k = loc_line(l)) return k;
  return 0;
}

}  // namespace parity::frontend::mlirio
