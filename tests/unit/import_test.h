// A gtest fixture for tests that import ONNX models (onnx_importer_test,
// onnx_qdq_test): a temp dir for the model files, an MLIRContext whose
// diagnostics are collected ("LOC: message", notes indented) instead of
// printed, and import(). KILN_TEST_DUMP=1 prints each imported module and
// every error.
#ifndef KILN_TESTS_UNIT_IMPORT_TEST_H
#define KILN_TESTS_UNIT_IMPORT_TEST_H

#include "kiln/Frontend/Onnx/OnnxImporter.h"
#include "onnx_model_builder.h"
#include "temp_dir_test.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace kiln::test {

/// "file:line:col" or a NameLoc's name, as a driver would print them.
inline std::string locStr(mlir::Location loc) {
  if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(loc))
    return (file.getFilename().str() + ":" + std::to_string(file.getLine()) + ":" +
            std::to_string(file.getColumn()));
  if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc))
    return name.getName().str();
  std::string s;
  llvm::raw_string_ostream os(s);
  os << loc;
  return s;
}

class ImportTest : public TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    handler = std::make_unique<mlir::ScopedDiagnosticHandler>(&ctx, [this](mlir::Diagnostic &diag) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << locStr(diag.getLocation()) << ": " << diag;
      for (const mlir::Diagnostic &note : diag.getNotes())
        os << "\n  note: " << note;
      (diag.getSeverity() == mlir::DiagnosticSeverity::Error ? errors : warnings)
          .push_back(text);
      return mlir::success();
    });
  }
  void TearDown() override {
    if (std::getenv("KILN_TEST_DUMP"))
      for (const std::string &d : errors)
        llvm::errs() << "[diag] " << d << "\n";
    handler.reset();
    TempDirTest::TearDown();
  }

  /// The builder's model saved as model.onnx in the temp dir and imported.
  mlir::OwningOpRef<mlir::ModuleOp> import(const OnnxModelBuilder &b,
                                           const ImportOptions &opts = {}) {
    std::string file = path("model.onnx");
    EXPECT_TRUE(b.save(file));
    auto module = importOnnx(ctx, file, opts);
    if (module && std::getenv("KILN_TEST_DUMP"))
      module->print(llvm::errs());
    return module;
  }

  std::string allErrors() const {
    std::string s;
    for (const std::string &e : errors)
      s += e + "\n";
    return s;
  }

  mlir::MLIRContext ctx;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
  std::vector<std::string> errors, warnings;
};

} // namespace kiln::test

#endif
