#include "Json.h"

#include "llvm/Support/raw_ostream.h"

using namespace kiln;

std::string cli::jsonString(llvm::StringRef s) {
  return llvm::json::isUTF8(s) ? s.str() : llvm::json::fixUTF8(s);
}

std::string cli::jsonString(const flatbuffers::String *s) {
  return jsonString(s ? llvm::StringRef(s->c_str(), s->size()) : llvm::StringRef());
}

std::string cli::writeJsonFile(const std::string &path, unsigned indent,
                               llvm::function_ref<void(llvm::json::OStream &)> write) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return "cannot write " + path + ": " + ec.message();
  {
    llvm::json::OStream j(os, indent);
    write(j);
  }
  os << "\n";
  os.close();
  return os.has_error() ? "cannot write " + path + ": " + os.error().message() : std::string();
}
