//===- CalibrationTable.cpp - Read and write calibration tables -----------===//
#include "kiln/Calibration/CalibrationTable.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace kiln::calib {

namespace {

constexpr const char *kHeader = "# kiln calibration table v2";
constexpr const char *kHeaderV1 = "# kiln calibration table v1";
constexpr const char *kHeaderPrefix = "# kiln calibration table v";
/// The prefix of a v2 line holding a tensor's channel means.
constexpr const char *kMeanPrefix = "#!mean ";
/// The method column of a tensor whose method is not recorded.
constexpr const char *kNoMethod = "-";

/// Whether `name` may stand in a v2 table's method column.
bool isTensorMethod(const std::string &name) {
  for (config::CalibMethod m : {config::CalibMethod::MinMax, config::CalibMethod::KL,
                                config::CalibMethod::Percentile, config::CalibMethod::Mse})
    if (name == config::toString(m))
      return true;
  return name == kNoMethod;
}

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string trim(const std::string &s) {
  size_t b = 0, e = s.size();
  while (b < e && isSpace(s[b]))
    ++b;
  while (e > b && isSpace(s[e - 1]))
    --e;
  return s.substr(b, e - b);
}

/// Splits off the last whitespace-separated field of `s` (already trimmed).
bool popField(std::string &s, std::string &field) {
  size_t e = s.size();
  while (e > 0 && isSpace(s[e - 1]))
    --e;
  size_t b = e;
  while (b > 0 && !isSpace(s[b - 1]))
    --b;
  if (b == e)
    return false;
  field = s.substr(b, e - b);
  s.resize(b);
  while (!s.empty() && isSpace(s.back()))
    s.pop_back();
  return true;
}

bool parseNumber(const std::string &t, double &out) {
  char *end = nullptr;
  errno = 0;
  out = std::strtod(t.c_str(), &end);
  return !t.empty() && *end == '\0' && errno != ERANGE && std::isfinite(out);
}

std::string number(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

} // namespace

std::string parseCalibrationTable(const std::string &text,
                                  const std::string &path,
                                  std::map<std::string, TensorRange> &out) {
  out.clear();
  std::map<std::string, size_t> firstLine;
  bool haveHeader = false;
  int version = 0;
  size_t lineNo = 0;
  auto fail = [&](const std::string &message) {
    out.clear();
    return path + ":" + std::to_string(lineNo) + ": error: " + message;
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos)
      nl = text.size();
    const std::string line = trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++lineNo;
    if (line.empty())
      continue;
    if (!haveHeader) {
      version = line == kHeader ? 2 : line == kHeaderV1 ? 1 : 0;
      if (line.rfind(kHeaderPrefix, 0) == 0 && !version)
        return fail("unsupported calibration table version '" +
                    line.substr(std::strlen("# kiln calibration table ")) +
                    "' (this kiln reads v1 and v2)");
      if (!version)
        return fail("not a kiln calibration table: the first line must be '" +
                    std::string(kHeader) + "'");
      haveHeader = true;
      continue;
    }
    if (version == 2 && line.rfind(kMeanPrefix, 0) == 0) {
      // #!mean <count> <values...> <name>
      const char *p = line.c_str() + std::strlen(kMeanPrefix);
      char *end = nullptr;
      errno = 0;
      const unsigned long long count = std::strtoull(p, &end, 10);
      if (end == p || errno == ERANGE || count == 0 || count > (1u << 20))
        return fail("expected '#!mean <count> <means...> <tensor>', got '" + line + "'");
      std::vector<double> means(count);
      for (double &m : means) {
        p = end;
        m = std::strtod(p, &end);
        if (end == p || !std::isfinite(m) || (*end != ' ' && *end != '\t'))
          return fail("'#!mean' line: expected " + std::to_string(count) +
                      " finite numbers before the tensor name, got '" + line + "'");
      }
      const std::string name = trim(end);
      auto it = out.find(name);
      if (it == out.end())
        return fail("'#!mean' line for tensor '" + name + "', which no line before it lists");
      if (!it->second.channelMeans.empty())
        return fail("tensor '" + name + "' has two '#!mean' lines");
      it->second.channelMeans = std::move(means);
      continue;
    }
    if (line[0] == '#')
      continue;
    std::string rest = line, fields[4];
    const int columns = version == 2 ? 4 : 3;
    bool ok = true;
    for (int i = columns - 1; i >= 0 && ok; --i)
      ok = popField(rest, fields[i]);
    if (!ok || rest.empty())
      return fail(std::string("expected 'tensor threshold min max") +
                  (version == 2 ? " method" : "") + "', got '" + line + "'");
    TensorRange r;
    if (version == 2) {
      if (!isTensorMethod(fields[3]))
        return fail("tensor '" + rest + "': method '" + fields[3] +
                    "' is not minmax, kl, percentile, mse or -");
      if (fields[3] != kNoMethod)
        r.method = fields[3];
    }
    const char *what[3] = {"threshold", "min", "max"};
    double *dst[3] = {&r.threshold, &r.min, &r.max};
    for (int i = 0; i < 3; ++i)
      if (!parseNumber(fields[i], *dst[i]))
        return fail("tensor '" + rest + "': " + what[i] + " '" + fields[i] +
                    "' is not a finite number");
    if (r.threshold < 0)
      return fail("tensor '" + rest + "': threshold " + fields[0] +
                  " is negative");
    if (r.min > r.max)
      return fail("tensor '" + rest + "': min " + fields[1] +
                  " is greater than max " + fields[2]);
    if (auto [it, inserted] = firstLine.emplace(rest, lineNo); !inserted)
      return fail("tensor '" + rest + "' is listed twice (first on line " +
                  std::to_string(it->second) + ")");
    out[rest] = r;
  }
  if (!haveHeader) {
    lineNo = 1;
    return fail("empty file, not a kiln calibration table");
  }
  return "";
}

std::string readCalibrationTable(const std::string &path,
                                 std::map<std::string, TensorRange> &out) {
  out.clear();
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return path + ": error: cannot open calibration table: " +
           std::strerror(errno);
  std::string text;
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0)
    text.append(buffer, n);
  const bool failed = std::ferror(f);
  const int readErrno = errno;
  std::fclose(f);
  if (failed)
    return path + ": error: cannot read calibration table: " +
           std::strerror(readErrno);
  return parseCalibrationTable(text, path, out);
}

std::string formatCalibrationTable(const std::vector<NamedRange> &tensors,
                                   const TableInfo &info, std::string &error) {
  error.clear();
  std::string text = std::string(kHeader) + "\n";
  text += "# model: " + info.model + "  samples: " +
          std::to_string(info.samples) +
          "  method: " + config::toString(info.method) + "\n";
  text += "# tensor threshold min max method\n";
  std::set<std::string> names;
  for (const NamedRange &t : tensors) {
    if (t.name.empty() || t.name[0] == '#' ||
        t.name.find_first_of("\n\r") != std::string::npos ||
        trim(t.name) != t.name) {
      error = "tensor name '" + t.name +
              "' cannot be written to a calibration table";
      return "";
    }
    if (!names.insert(t.name).second) {
      error = "tensor '" + t.name + "' is listed twice";
      return "";
    }
    if (!t.range.method.empty() && !isTensorMethod(t.range.method)) {
      error = "tensor '" + t.name + "': method '" + t.range.method +
              "' cannot be written to a calibration table";
      return "";
    }
    text += t.name + " " + number(t.range.threshold) + " " +
            number(t.range.min) + " " + number(t.range.max) + " " +
            (t.range.method.empty() ? kNoMethod : t.range.method) + "\n";
    if (!t.range.channelMeans.empty()) {
      text += kMeanPrefix + std::to_string(t.range.channelMeans.size());
      for (double m : t.range.channelMeans)
        text += " " + number(std::isfinite(m) ? m : 0.0);
      text += " " + t.name + "\n";
    }
  }
  return text;
}

std::string writeCalibrationTable(const std::string &path,
                                  const std::vector<NamedRange> &tensors,
                                  const TableInfo &info) {
  std::string error;
  const std::string text = formatCalibrationTable(tensors, info, error);
  if (!error.empty())
    return path + ": error: " + error;
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return path + ": error: cannot write calibration table: " +
           std::strerror(errno);
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int writeErrno = errno;
  if (std::fclose(f) != 0 || !wrote)
    return path + ": error: cannot write calibration table: " +
           std::strerror(writeErrno);
  return "";
}

} // namespace kiln::calib
