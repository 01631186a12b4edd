// One MLIR context with every upstream dialect and the sharding interface
// models registered (as mlir-opt does), and diagnostics captured as text with
// file:line:col and the source line, so they can be shown to the user.
#pragma once
#include <memory>
#include <string>

#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/Diagnostics.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/OwningOpRef.h>

#include "ir/error.h"

namespace parity::frontend::mlirio {

class Session {
 public:
  Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Throws ir::InvalidInput with MLIR's diagnostic (file:line:col) when the
  // file cannot be read, parsed or verified.
  mlir::OwningOpRef<mlir::ModuleOp> parse_file(const std::string& path);
  // Text produced by the partitioner (our child process); `name` for messages.
  mlir::OwningOpRef<mlir::ModuleOp> parse_text(const std::string& text, const std::string& name);

  mlir::MLIRContext& ctx() { return ctx_; }
  // Diagnostics emitted since the last call.
  std::string take_diags();

 private:
  mlir::MLIRContext ctx_;
  llvm::SourceMgr sm_;
  std::string diags_;
  llvm::raw_string_ostream os_{diags_};
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> handler_;
};

// MLIR's diagnostic text (`FILE:LINE:COL: error: ...` and the source) as a Diag at that position.
ir::Diag as_diag(const std::string& text);
// `file:line:col` of an op's location, or "" when it has none.
std::string loc_str(mlir::Location loc);
int loc_line(mlir::Location loc);

}  // namespace parity::frontend::mlirio
