//===- Json.h - What kiln's JSON output shares ------------------*- C++ -*-===//
//
// Every JSON document the tools write (inspect --json, run --stats, the
// trace) goes through llvm::json::OStream, which escapes what JSON needs.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_JSON_H
#define KILN_TOOLS_KILN_JSON_H

#include "kiln/bmodel_generated.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace kiln::cli {

/// A name for a JSON string. Names come from ONNX models and bmodels, which
/// may hold any bytes, and llvm::json takes only UTF-8: invalid sequences
/// become U+FFFD.
std::string jsonString(llvm::StringRef s);
/// The same for a bmodel's string ("" when absent).
std::string jsonString(const flatbuffers::String *s);

/// Writes one JSON document (`indent` spaces per level, 0 for one line) and a
/// newline to `path`. Returns an error message, empty on success.
std::string writeJsonFile(const std::string &path, unsigned indent,
                          llvm::function_ref<void(llvm::json::OStream &)> write);

} // namespace kiln::cli

#endif
