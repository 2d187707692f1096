#include "kiln/host/npz.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <utility>

// Array::data is little-endian and read with memcpy.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "kiln_host assumes a little-endian host");

namespace kiln::host {

const char *toString(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I8:
    return "i8";
  case DType::U8:
    return "u8";
  case DType::I16:
    return "i16";
  case DType::U16:
    return "u16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::F64:
    return "f64";
  case DType::Bool:
    return "bool";
  }
  return "?";
}

size_t dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
  case DType::U16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::I64:
  case DType::F64:
    return 8;
  }
  return 0;
}

size_t Array::numElements() const {
  size_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

size_t Array::elementBytes() const { return dtypeBytes(dtype); }

namespace {

template <typename T> T load(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24.
    float magnitude = std::ldexp(float(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  uint32_t bits = exponent == 0x1f
                      ? sign | 0x7f800000u | (mantissa << 13)
                      : sign | ((exponent + 112u) << 23) | (mantissa << 13);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

} // namespace

std::vector<float> Array::toF32() const {
  const size_t n = std::min(numElements(), data.size() / elementBytes());
  std::vector<float> out(n);
  const uint8_t *p = data.data();
  for (size_t i = 0; i < n; ++i) {
    switch (dtype) {
    case DType::F32:
      out[i] = load<float>(p + 4 * i);
      break;
    case DType::F16:
      out[i] = halfToFloat(load<uint16_t>(p + 2 * i));
      break;
    case DType::BF16:
      out[i] = bf16ToFloat(load<uint16_t>(p + 2 * i));
      break;
    case DType::I8:
      out[i] = float(load<int8_t>(p + i));
      break;
    case DType::U8:
      out[i] = float(p[i]);
      break;
    case DType::I16:
      out[i] = float(load<int16_t>(p + 2 * i));
      break;
    case DType::U16:
      out[i] = float(load<uint16_t>(p + 2 * i));
      break;
    case DType::I32:
      out[i] = float(load<int32_t>(p + 4 * i));
      break;
    case DType::I64:
      out[i] = float(load<int64_t>(p + 8 * i));
      break;
    case DType::F64:
      out[i] = float(load<double>(p + 8 * i));
      break;
    case DType::Bool:
      out[i] = p[i] ? 1.0f : 0.0f;
      break;
    }
  }
  return out;
}

Array Array::fromF32(std::string name, std::vector<int64_t> shape,
                     const float *p) {
  Array a;
  a.name = std::move(name);
  a.dtype = DType::F32;
  a.shape = std::move(shape);
  a.data.resize(a.numElements() * sizeof(float));
  if (!a.data.empty())
    std::memcpy(a.data.data(), p, a.data.size());
  return a;
}

// ---------------------------------------------------------------------------
// Files

std::string readFile(const std::string &path, std::vector<uint8_t> &out) {
  out.clear();
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return path + ": cannot open: " + std::strerror(errno);
  // fstat rather than seek/tell: a directory opens fine but has no real size.
  struct stat st;
  std::string error;
  if (fstat(fileno(f), &st) != 0) {
    error = path + ": cannot stat: " + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    error = path + ": not a regular file";
  } else {
    out.resize(static_cast<size_t>(st.st_size));
    if (std::fread(out.data(), 1, out.size(), f) != out.size())
      error = path + ": read error" +
              (std::ferror(f) ? std::string(": ") + std::strerror(errno)
                              : std::string(": file shrank while reading"));
  }
  std::fclose(f);
  if (!error.empty())
    out.clear();
  return error;
}

std::string writeFile(const std::string &path, const void *data, size_t size) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return path + ": cannot open for writing: " + std::strerror(errno);
  bool ok = size == 0 || std::fwrite(data, 1, size, f) == size;
  int writeErrno = errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    writeErrno = errno;
  }
  if (!ok) {
    std::remove(path.c_str());
    return path + ": write error: " + std::strerror(writeErrno);
  }
  return {};
}

// ---------------------------------------------------------------------------
// .npy

namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicLen = 6;

struct Descr {
  DType dtype;
  bool bigEndian;
};

// Accepts the descrs numpy writes for the supported dtypes, in either byte
// order.
bool parseDescr(const std::string &descr, Descr &out) {
  if (descr.size() < 3)
    return false;
  const char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return false;
  const std::string type = descr.substr(1);
  static const struct {
    const char *type;
    DType dtype;
  } kTypes[] = {{"f4", DType::F32}, {"f2", DType::F16}, {"f8", DType::F64},
                {"i1", DType::I8},  {"u1", DType::U8},  {"i2", DType::I16},
                {"u2", DType::U16}, {"i4", DType::I32}, {"i8", DType::I64},
                {"b1", DType::Bool}};
  for (const auto &t : kTypes) {
    if (type == t.type) {
      out.dtype = t.dtype;
      out.bigEndian = order == '>' && dtypeBytes(t.dtype) > 1;
      return true;
    }
  }
  return false;
}

const char *descrOf(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::I8:
    return "|i1";
  case DType::U8:
    return "|u1";
  case DType::I16:
    return "<i2";
  case DType::U16:
    return "<u2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::F64:
    return "<f8";
  case DType::Bool:
    return "|b1";
  case DType::BF16:
    return nullptr;
  }
  return nullptr;
}

// The header is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// This parser accepts exactly the three keys numpy writes, in any order.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text_(text) {}

  std::string parse(std::string &descr, bool &fortranOrder,
                    std::vector<int64_t> &shape) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    if (!consume('{'))
      return "header is not a dict";
    while (!consume('}')) {
      std::string key;
      if (!parseString(key))
        return "expected a quoted key in the header";
      if (!consume(':'))
        return "expected ':' after '" + key + "' in the header";
      if (key == "descr") {
        if (peek() == '[')
          return "structured dtypes are not supported";
        if (!parseString(descr))
          return "'descr' is not a string";
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (!parseBool(fortranOrder))
          return "'fortran_order' is not True or False";
        haveOrder = true;
      } else if (key == "shape") {
        std::string error = parseShape(shape);
        if (!error.empty())
          return error;
        haveShape = true;
      } else {
        return "unexpected key '" + key + "' in the header";
      }
      if (!consume(',') && peek() != '}')
        return "expected ',' or '}' in the header";
    }
    if (!haveDescr || !haveOrder || !haveShape)
      return "header lacks 'descr', 'fortran_order' or 'shape'";
    return {};
  }

private:
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace((unsigned char)text_[pos_]))
      ++pos_;
  }
  char peek() {
    skipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool consume(char c) {
    if (peek() != c)
      return false;
    ++pos_;
    return true;
  }
  bool parseString(std::string &out) {
    const char quote = peek();
    if (quote != '\'' && quote != '"')
      return false;
    size_t close = text_.find(quote, pos_ + 1);
    if (close == std::string::npos)
      return false;
    out = text_.substr(pos_ + 1, close - pos_ - 1);
    pos_ = close + 1;
    return true;
  }
  bool parseWord(const char *word) {
    const size_t len = std::strlen(word);
    skipSpace();
    if (text_.compare(pos_, len, word) != 0)
      return false;
    pos_ += len;
    return true;
  }
  bool parseBool(bool &out) {
    if (parseWord("True"))
      out = true;
    else if (parseWord("False"))
      out = false;
    else
      return false;
    return true;
  }
  std::string parseShape(std::vector<int64_t> &shape) {
    shape.clear();
    if (!consume('('))
      return "'shape' is not a tuple";
    while (!consume(')')) {
      skipSpace();
      int64_t dim = 0;
      size_t digits = 0;
      while (pos_ < text_.size() && std::isdigit((unsigned char)text_[pos_])) {
        if (dim > (INT64_MAX - 9) / 10)
          return "shape dimension too large";
        dim = dim * 10 + (text_[pos_++] - '0');
        ++digits;
      }
      if (digits == 0)
        return "'shape' holds something other than non-negative integers";
      if (pos_ < text_.size() && text_[pos_] == 'L') // Python 2 long suffix
        ++pos_;
      shape.push_back(dim);
      if (!consume(',') && peek() != ')')
        return "expected ',' or ')' in 'shape'";
    }
    return {};
  }

  const std::string &text_;
  size_t pos_ = 0;
};

void byteswapElements(std::vector<uint8_t> &data, size_t elementBytes) {
  for (size_t i = 0; i + elementBytes <= data.size(); i += elementBytes)
    std::reverse(data.begin() + i, data.begin() + i + elementBytes);
}

// Column-major to row-major: walk the C-order index, tracking the Fortran
// offset.
std::vector<uint8_t> fortranToC(const std::vector<uint8_t> &in,
                                const std::vector<int64_t> &shape,
                                size_t elementBytes, size_t count) {
  std::vector<uint8_t> out(count * elementBytes);
  const size_t rank = shape.size();
  if (count == 0)
    return out;
  std::vector<size_t> fortranStride(rank, 1);
  for (size_t k = 1; k < rank; ++k)
    fortranStride[k] = fortranStride[k - 1] * size_t(shape[k - 1]);
  std::vector<int64_t> index(rank, 0);
  size_t fortranOffset = 0;
  for (size_t c = 0; c < count; ++c) {
    std::memcpy(&out[c * elementBytes], &in[fortranOffset * elementBytes],
                elementBytes);
    for (size_t k = rank; k-- > 0;) {
      fortranOffset += fortranStride[k];
      if (++index[k] < shape[k])
        break;
      fortranOffset -= size_t(shape[k]) * fortranStride[k];
      index[k] = 0;
    }
  }
  return out;
}

// Parses one .npy image; errors are phrased without the file or entry name.
std::string parseNpy(const uint8_t *p, size_t size, Array &out) {
  if (size < 10 || std::memcmp(p, kNpyMagic, kNpyMagicLen) != 0)
    return "not a .npy array (bad magic)";
  const uint8_t major = p[6];
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = load<uint16_t>(p + 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return "truncated .npy header";
    headerLen = load<uint32_t>(p + 8);
    headerStart = 12;
  } else {
    return "unsupported .npy format version " + std::to_string(major) + "." +
           std::to_string(p[7]);
  }
  if (headerLen > size - headerStart)
    return "truncated .npy header";
  const std::string header(reinterpret_cast<const char *>(p + headerStart),
                           headerLen);

  std::string descrText;
  bool fortranOrder = false;
  std::string error =
      HeaderParser(header).parse(descrText, fortranOrder, out.shape);
  if (!error.empty())
    return error;
  Descr descr;
  if (!parseDescr(descrText, descr))
    return "unsupported dtype '" + descrText + "'";
  out.dtype = descr.dtype;

  const size_t elementBytes = dtypeBytes(descr.dtype);
  size_t count = 1;
  for (int64_t d : out.shape) {
    if (d != 0 && count > SIZE_MAX / elementBytes / size_t(d))
      return "shape is too large";
    count *= size_t(d);
  }
  const size_t dataStart = headerStart + headerLen;
  const size_t dataBytes = count * elementBytes;
  if (dataBytes > size - dataStart)
    return "truncated data: shape needs " + std::to_string(dataBytes) +
           " bytes, " + std::to_string(size - dataStart) + " present";
  out.data.assign(p + dataStart, p + dataStart + dataBytes);
  if (descr.bigEndian)
    byteswapElements(out.data, elementBytes);
  if (fortranOrder && out.shape.size() > 1)
    out.data = fortranToC(out.data, out.shape, elementBytes, count);
  return {};
}

// numpy pads the header with spaces and ends it with '\n' so that the data
// starts on a 64-byte boundary.
std::vector<uint8_t> npyHeader(const Array &a, const char *descr) {
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < a.shape.size(); ++i)
    dict += (i ? ", " : "") + std::to_string(a.shape[i]);
  dict += a.shape.size() == 1 ? ",), }" : "), }";

  size_t prefix = 10;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  if (total - prefix > 0xffff) {
    prefix = 12;
    total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  }
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';

  std::vector<uint8_t> out(kNpyMagic, kNpyMagic + kNpyMagicLen);
  const uint32_t len = uint32_t(dict.size());
  out.push_back(prefix == 10 ? 1 : 2);
  out.push_back(0);
  out.push_back(uint8_t(len));
  out.push_back(uint8_t(len >> 8));
  if (prefix == 12) {
    out.push_back(uint8_t(len >> 16));
    out.push_back(uint8_t(len >> 24));
  }
  out.insert(out.end(), dict.begin(), dict.end());
  return out;
}

// ---------------------------------------------------------------------------
// Zip container

constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr uint32_t kCentralHeaderSig = 0x02014b50;
constexpr uint32_t kEndOfCentralDirSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndOfCentralDirSize = 22;
constexpr size_t kZip64EndSize = 56;
constexpr size_t kZip64LocatorSize = 20;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;
// Deflate cannot expand more than ~1032:1; a larger claimed size is corrupt
// and must not drive a huge allocation.
constexpr uint64_t kMaxDeflateRatio = 1032;

uint32_t crc32Of(uint32_t crc, const uint8_t *p, size_t n) {
  // zlib resets the CRC for a null buffer, which an empty vector may have.
  return n == 0 ? crc : uint32_t(crc32_z(crc, p, n));
}

struct ZipEntry {
  std::string name;
  uint16_t flags;
  uint16_t method;
  uint32_t crc;
  uint64_t compressedSize;
  uint64_t size;
  uint64_t localHeaderOffset;
};

// Finds the central directory (offset, size, entry count), zip64 included.
std::string findCentralDirectory(const std::vector<uint8_t> &file,
                                 uint64_t &cdOffset, uint64_t &cdSize,
                                 uint64_t &entries) {
  if (file.size() < kEndOfCentralDirSize)
    return "not a zip file (too short)";
  // The end record sits before a comment of at most 64 KiB.
  const size_t last = file.size() - kEndOfCentralDirSize;
  const size_t first = last > 0xffff ? last - 0xffff : 0;
  size_t eocd = SIZE_MAX;
  for (size_t pos = last + 1; pos-- > first;) {
    if (load<uint32_t>(&file[pos]) == kEndOfCentralDirSig &&
        pos + kEndOfCentralDirSize + load<uint16_t>(&file[pos + 20]) <=
            file.size()) {
      eocd = pos;
      break;
    }
  }
  if (eocd == SIZE_MAX)
    return "not a zip file (no end of central directory)";
  const uint8_t *e = &file[eocd];
  if (load<uint16_t>(e + 4) != 0 || load<uint16_t>(e + 6) != 0)
    return "multi-disk zip files are not supported";
  entries = load<uint16_t>(e + 10);
  cdSize = load<uint32_t>(e + 12);
  cdOffset = load<uint32_t>(e + 16);
  if (entries == 0xffff || cdSize == 0xffffffff || cdOffset == 0xffffffff) {
    if (eocd < kZip64LocatorSize ||
        load<uint32_t>(&file[eocd - kZip64LocatorSize]) != kZip64LocatorSig)
      return "corrupt zip64 end of central directory locator";
    const uint64_t z64 = load<uint64_t>(&file[eocd - kZip64LocatorSize + 8]);
    if (file.size() < kZip64EndSize || z64 > file.size() - kZip64EndSize ||
        load<uint32_t>(&file[z64]) != kZip64EndSig)
      return "corrupt zip64 end of central directory";
    entries = load<uint64_t>(&file[z64 + 32]);
    cdSize = load<uint64_t>(&file[z64 + 40]);
    cdOffset = load<uint64_t>(&file[z64 + 48]);
  }
  if (cdOffset > file.size() || cdSize > file.size() - cdOffset)
    return "central directory lies outside the file";
  return {};
}

// Replaces saturated 32-bit fields with their values from a zip64 extra field.
std::string applyZip64Extra(const uint8_t *extra, size_t extraLen,
                            uint32_t size32, uint32_t compressed32,
                            uint32_t offset32, ZipEntry &entry) {
  for (size_t pos = 0; pos + 4 <= extraLen;) {
    const uint16_t id = load<uint16_t>(extra + pos);
    const uint16_t len = load<uint16_t>(extra + pos + 2);
    if (len > extraLen - pos - 4)
      return "corrupt extra field";
    if (id == 0x0001) {
      const uint8_t *field = extra + pos + 4;
      size_t used = 0;
      for (auto [value32, target] :
           {std::pair{size32, &entry.size},
            std::pair{compressed32, &entry.compressedSize},
            std::pair{offset32, &entry.localHeaderOffset}}) {
        if (value32 != 0xffffffff)
          continue;
        if (used + 8 > len)
          return "corrupt zip64 extra field";
        *target = load<uint64_t>(field + used);
        used += 8;
      }
    }
    pos += 4 + size_t(len);
  }
  return {};
}

std::string readCentralDirectory(const std::vector<uint8_t> &file,
                                 std::vector<ZipEntry> &entries) {
  uint64_t cdOffset = 0, cdSize = 0, count = 0;
  std::string error = findCentralDirectory(file, cdOffset, cdSize, count);
  if (!error.empty())
    return error;
  const uint8_t *p = file.data() + cdOffset;
  size_t remaining = size_t(cdSize);
  for (uint64_t i = 0; i < count; ++i) {
    if (remaining < kCentralHeaderSize ||
        load<uint32_t>(p) != kCentralHeaderSig)
      return "corrupt central directory";
    const size_t nameLen = load<uint16_t>(p + 28);
    const size_t extraLen = load<uint16_t>(p + 30);
    const size_t commentLen = load<uint16_t>(p + 32);
    const size_t recordLen =
        kCentralHeaderSize + nameLen + extraLen + commentLen;
    if (recordLen > remaining)
      return "corrupt central directory";
    ZipEntry entry;
    entry.flags = load<uint16_t>(p + 8);
    entry.method = load<uint16_t>(p + 10);
    entry.crc = load<uint32_t>(p + 16);
    const uint32_t compressed32 = load<uint32_t>(p + 20);
    const uint32_t size32 = load<uint32_t>(p + 24);
    const uint32_t offset32 = load<uint32_t>(p + 42);
    entry.compressedSize = compressed32;
    entry.size = size32;
    entry.localHeaderOffset = offset32;
    entry.name.assign(reinterpret_cast<const char *>(p + kCentralHeaderSize),
                      nameLen);
    error = applyZip64Extra(p + kCentralHeaderSize + nameLen, extraLen, size32,
                            compressed32, offset32, entry);
    if (!error.empty())
      return "entry '" + entry.name + "': " + error;
    entries.push_back(std::move(entry));
    p += recordLen;
    remaining -= recordLen;
  }
  return {};
}

std::string inflateRaw(const uint8_t *in, uint64_t inSize,
                       std::vector<uint8_t> &out) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
    return "zlib initialisation failed";
  // zlib counts in uInt: each call gets as much as fits, so Z_BUF_ERROR
  // means no progress is possible (input ended early or output is full).
  constexpr uint64_t kChunk = 1u << 30;
  uint8_t emptyOut; // zlib rejects a null next_out even when avail_out is 0
  uint64_t inUsed = 0, outUsed = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_in = const_cast<Bytef *>(in + inUsed);
    zs.avail_in = uInt(std::min(kChunk, inSize - inUsed));
    zs.next_out = out.empty() ? &emptyOut : out.data() + outUsed;
    zs.avail_out = uInt(std::min<uint64_t>(kChunk, out.size() - outUsed));
    const uInt availIn = zs.avail_in, availOut = zs.avail_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    inUsed += availIn - zs.avail_in;
    outUsed += availOut - zs.avail_out;
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END)
    return rc == Z_BUF_ERROR ? "compressed data is truncated or longer than "
                               "its recorded size"
                             : "corrupt compressed data";
  if (outUsed != out.size())
    return "compressed data is shorter than its recorded size";
  return {};
}

// The uncompressed bytes of one entry, checked against its CRC.
std::string extractEntry(const std::vector<uint8_t> &file,
                         const ZipEntry &entry, std::vector<uint8_t> &out) {
  if (entry.flags & 0x1)
    return "encrypted entries are not supported";
  const uint64_t lh = entry.localHeaderOffset;
  if (lh > file.size() || file.size() - lh < kLocalHeaderSize ||
      load<uint32_t>(&file[lh]) != kLocalHeaderSig)
    return "corrupt local header";
  const uint64_t dataStart = lh + kLocalHeaderSize +
                             load<uint16_t>(&file[lh + 26]) +
                             load<uint16_t>(&file[lh + 28]);
  if (dataStart > file.size() || entry.compressedSize > file.size() - dataStart)
    return "truncated entry data";
  const uint8_t *data = file.data() + dataStart;

  if (entry.method == kMethodStored) {
    if (entry.compressedSize != entry.size)
      return "stored entry with differing sizes";
    out.assign(data, data + entry.size);
  } else if (entry.method == kMethodDeflate) {
    if (entry.size > entry.compressedSize * kMaxDeflateRatio + 1024)
      return "implausible uncompressed size";
    out.resize(size_t(entry.size));
    std::string error = inflateRaw(data, entry.compressedSize, out);
    if (!error.empty())
      return error;
  } else {
    return "unsupported compression method " + std::to_string(entry.method);
  }
  if (crc32Of(0, out.data(), out.size()) != entry.crc)
    return "CRC-32 mismatch (corrupt data)";
  return {};
}

bool endsWith(const std::string &s, const char *suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

} // namespace

std::string readNpz(const std::string &path, std::vector<Array> &out) {
  out.clear();
  std::vector<uint8_t> file;
  std::string error = readFile(path, file);
  if (!error.empty())
    return error;
  std::vector<ZipEntry> entries;
  error = readCentralDirectory(file, entries);
  if (!error.empty())
    return path + ": " + error;
  std::vector<Array> arrays;
  std::vector<uint8_t> npy;
  for (const ZipEntry &entry : entries) {
    if (endsWith(entry.name, "/"))
      continue; // directory entries carry no array
    if (!endsWith(entry.name, ".npy"))
      return path + ": entry '" + entry.name + "' is not a .npy file";
    Array array;
    error = extractEntry(file, entry, npy);
    if (error.empty())
      error = parseNpy(npy.data(), npy.size(), array);
    if (!error.empty())
      return path + ": entry '" + entry.name + "': " + error;
    array.name = entry.name.substr(0, entry.name.size() - 4);
    arrays.push_back(std::move(array));
  }
  out = std::move(arrays);
  return {};
}

namespace {

class ZipWriter {
public:
  explicit ZipWriter(FILE *f) : f_(f) {}

  // Writes one stored entry whose content is the concatenation of parts.
  std::string
  addStored(const std::string &name,
            std::initializer_list<std::pair<const uint8_t *, size_t>> parts) {
    uint64_t size = 0;
    uint32_t crc = 0;
    for (auto [p, n] : parts) {
      size += n;
      crc = crc32Of(crc, p, n);
    }
    if (size >= 0xffffffffu || offset_ >= 0xffffffffu)
      return "archive would exceed 4 GiB (zip64 is not supported)";
    if (name.size() > 0xffff)
      return "array name is too long";
    const bool utf8 = std::any_of(name.begin(), name.end(), [](char c) {
      return (unsigned char)c >= 0x80;
    });
    const uint16_t flags = utf8 ? 0x800 : 0; // bit 11: the name is UTF-8

    std::vector<uint8_t> local;
    put32(local, kLocalHeaderSig);
    putCommonFields(local, flags, crc, uint32_t(size), uint16_t(name.size()));
    put16(local, 0); // extra length
    local.insert(local.end(), name.begin(), name.end());

    put32(central_, kCentralHeaderSig);
    put16(central_, kMadeByUnix);
    putCommonFields(central_, flags, crc, uint32_t(size),
                    uint16_t(name.size()));
    put16(central_, 0); // extra length
    put16(central_, 0); // comment length
    put16(central_, 0); // disk number
    put16(central_, 0); // internal attributes
    put32(central_, kRegularFileMode << 16);
    put32(central_, uint32_t(offset_));
    central_.insert(central_.end(), name.begin(), name.end());
    ++entries_;

    std::string error = write(local.data(), local.size());
    for (auto [p, n] : parts)
      if (error.empty())
        error = write(p, n);
    return error;
  }

  std::string finish() {
    if (entries_ > 0xffff || offset_ + central_.size() >= 0xffffffffu)
      return "archive would exceed zip limits (zip64 is not supported)";
    std::vector<uint8_t> end;
    put32(end, kEndOfCentralDirSig);
    put16(end, 0); // this disk
    put16(end, 0); // disk with the central directory
    put16(end, uint16_t(entries_));
    put16(end, uint16_t(entries_));
    put32(end, uint32_t(central_.size()));
    put32(end, uint32_t(offset_));
    put16(end, 0); // comment length
    std::string error = write(central_.data(), central_.size());
    return error.empty() ? write(end.data(), end.size()) : error;
  }

private:
  static constexpr uint16_t kVersionNeeded = 20; // 2.0: deflate-era baseline
  static constexpr uint16_t kMadeByUnix = (3 << 8) | kVersionNeeded;
  static constexpr uint32_t kRegularFileMode = 0100644;
  // 1980-01-01 00:00: a fixed timestamp keeps output reproducible.
  static constexpr uint16_t kDosTime = 0;
  static constexpr uint16_t kDosDate = (1 << 5) | 1;

  static void put16(std::vector<uint8_t> &v, uint16_t x) {
    v.push_back(uint8_t(x));
    v.push_back(uint8_t(x >> 8));
  }
  static void put32(std::vector<uint8_t> &v, uint32_t x) {
    put16(v, uint16_t(x));
    put16(v, uint16_t(x >> 16));
  }
  // The run of fields shared by local and central headers.
  static void putCommonFields(std::vector<uint8_t> &v, uint16_t flags,
                              uint32_t crc, uint32_t size, uint16_t nameLen) {
    put16(v, kVersionNeeded);
    put16(v, flags);
    put16(v, kMethodStored);
    put16(v, kDosTime);
    put16(v, kDosDate);
    put32(v, crc);
    put32(v, size); // compressed
    put32(v, size); // uncompressed
    put16(v, nameLen);
  }

  std::string write(const void *p, size_t n) {
    if (n != 0 && std::fwrite(p, 1, n, f_) != n)
      return std::string("write error: ") + std::strerror(errno);
    offset_ += n;
    return {};
  }

  FILE *f_;
  uint64_t offset_ = 0;
  uint64_t entries_ = 0;
  std::vector<uint8_t> central_;
};

std::string checkWritable(const Array &a, std::set<std::string> &names) {
  if (a.name.empty())
    return "an array has an empty name";
  if (!names.insert(a.name).second)
    return "duplicate array name '" + a.name + "'";
  if (a.dtype == DType::BF16)
    return "array '" + a.name +
           "': bf16 has no numpy dtype; convert it to f32 first";
  size_t count = 1;
  for (int64_t d : a.shape) {
    if (d < 0)
      return "array '" + a.name + "': negative dimension in shape";
    if (d != 0 && count > SIZE_MAX / size_t(d))
      return "array '" + a.name + "': shape is too large";
    count *= size_t(d);
  }
  if (count > SIZE_MAX / a.elementBytes() ||
      a.data.size() != count * a.elementBytes())
    return "array '" + a.name + "': data holds " +
           std::to_string(a.data.size()) + " bytes, shape and dtype need " +
           std::to_string(count * a.elementBytes());
  return {};
}

} // namespace

std::string writeNpz(const std::string &path,
                     const std::vector<Array> &arrays) {
  std::set<std::string> names;
  for (const Array &a : arrays) {
    std::string error = checkWritable(a, names);
    if (!error.empty())
      return path + ": " + error;
  }
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return path + ": cannot open for writing: " + std::strerror(errno);
  ZipWriter zip(f);
  std::string error;
  for (const Array &a : arrays) {
    const std::vector<uint8_t> header = npyHeader(a, descrOf(a.dtype));
    error = zip.addStored(a.name + ".npy", {{header.data(), header.size()},
                                            {a.data.data(), a.data.size()}});
    if (!error.empty())
      break;
  }
  if (error.empty())
    error = zip.finish();
  if (std::fclose(f) != 0 && error.empty())
    error = std::string("write error: ") + std::strerror(errno);
  if (!error.empty()) {
    std::remove(path.c_str());
    return path + ": " + error;
  }
  return {};
}

} // namespace kiln::host
