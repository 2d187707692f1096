#include "kiln/host/npz.h"

#include "kiln/abi/quant.h"

#include <sys/stat.h>
#include <zip.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
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

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
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
      out[i] = kiln_f16_to_f32(load<uint16_t>(p + 2 * i));
      break;
    case DType::BF16:
      out[i] = kiln_bf16_to_f32(load<uint16_t>(p + 2 * i));
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
// Zip container (libzip)

// Deflate cannot expand more than ~1032:1; a larger claimed size is corrupt
// and must not drive a huge allocation.
constexpr uint64_t kMaxDeflateRatio = 1032;
// The smallest zip file: an end of central directory record alone.
constexpr size_t kEmptyZipSize = 22;

// What went wrong, in the words of this file's other messages where libzip's
// code has one.
std::string describe(const zip_error_t *error) {
  switch (zip_error_code_zip(error)) {
  case ZIP_ER_NOZIP:
    return "not a zip file";
  case ZIP_ER_INCONS:
    return "corrupt zip file (inconsistent headers)";
  case ZIP_ER_CRC:
    return "CRC-32 mismatch (corrupt data)";
  case ZIP_ER_COMPRESSED_DATA:
  case ZIP_ER_ZLIB:
    return "corrupt compressed data";
  case ZIP_ER_EOF:
    return "truncated zip file";
  case ZIP_ER_MULTIDISK:
    return "multi-disk zip files are not supported";
  case ZIP_ER_ENCRNOTSUPP:
  case ZIP_ER_NOPASSWD:
  case ZIP_ER_WRONGPASSWD:
    return "encrypted entries are not supported";
  case ZIP_ER_COMPNOTSUPP:
    return "unsupported compression method";
  case ZIP_ER_MEMORY:
    return "out of memory";
  default: {
    std::string text = zip_error_strerror(const_cast<zip_error_t *>(error));
    if (!text.empty())
      text[0] = char(std::tolower((unsigned char)text[0]));
    return "zip: " + text;
  }
  }
}

std::string describe(int zipErrorCode) {
  zip_error_t error;
  zip_error_init_with_code(&error, zipErrorCode);
  std::string text = describe(&error);
  zip_error_fini(&error);
  return text;
}

struct ZipDiscard {
  void operator()(zip_t *zip) const { zip_discard(zip); }
};
using ZipArchive = std::unique_ptr<zip_t, ZipDiscard>;

struct ZipSourceFree {
  void operator()(zip_source_t *source) const { zip_source_free(source); }
};
using ZipSource = std::unique_ptr<zip_source_t, ZipSourceFree>;

// An archive over `file`'s bytes (which must outlive it), read only.
std::string openArchive(const std::vector<uint8_t> &file, ZipArchive &out) {
  if (file.size() < kEmptyZipSize)
    return "not a zip file (too short)";
  zip_error_t error;
  zip_error_init(&error);
  ZipSource source(zip_source_buffer_create(file.data(), file.size(), 0, &error));
  std::string message;
  if (source) {
    out.reset(zip_open_from_source(source.get(), ZIP_RDONLY | ZIP_CHECKCONS, &error));
    if (out)
      source.release(); // the archive owns it now
  }
  if (!out)
    message = describe(&error);
  zip_error_fini(&error);
  return message;
}

// The uncompressed bytes of entry `index`; libzip checks them against the
// entry's CRC-32 and size when the read reaches the end.
std::string extractEntry(zip_t *zip, zip_uint64_t index, const zip_stat_t &st,
                         size_t fileSize, std::vector<uint8_t> &out) {
  if (st.encryption_method != ZIP_EM_NONE)
    return "encrypted entries are not supported";
  if (st.comp_size > fileSize)
    return "truncated entry data";
  if (st.comp_method == ZIP_CM_STORE) {
    if (st.comp_size != st.size)
      return "stored entry with differing sizes";
  } else if (st.comp_method == ZIP_CM_DEFLATE) {
    if (st.size > st.comp_size * kMaxDeflateRatio + 1024)
      return "implausible uncompressed size";
  } else {
    return "unsupported compression method " + std::to_string(st.comp_method);
  }
  std::unique_ptr<zip_file_t, int (*)(zip_file_t *)> entry(zip_fopen_index(zip, index, 0),
                                                          zip_fclose);
  if (!entry)
    return describe(zip_get_error(zip));
  out.resize(size_t(st.size));
  size_t got = 0;
  while (got < out.size()) {
    const zip_int64_t n = zip_fread(entry.get(), out.data() + got, out.size() - got);
    if (n < 0)
      return describe(zip_file_get_error(entry.get()));
    if (n == 0)
      return "entry data is shorter than its recorded size";
    got += size_t(n);
  }
  // One more read meets the end of the data, where the CRC is checked.
  uint8_t extra;
  const zip_int64_t n = zip_fread(entry.get(), &extra, 1);
  if (n < 0)
    return describe(zip_file_get_error(entry.get()));
  if (n > 0)
    return "entry data is longer than its recorded size";
  const int closed = zip_fclose(entry.release());
  return closed == 0 ? std::string() : describe(closed);
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
  ZipArchive zip;
  error = openArchive(file, zip);
  if (!error.empty())
    return path + ": " + error;
  std::vector<Array> arrays;
  std::vector<uint8_t> npy;
  const zip_int64_t count = zip_get_num_entries(zip.get(), 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip.get(), zip_uint64_t(i), 0, &st) != 0)
      return path + ": " + describe(zip_get_error(zip.get()));
    const std::string name = st.name ? st.name : "";
    if (endsWith(name, "/"))
      continue; // directory entries carry no array
    if (!endsWith(name, ".npy"))
      return path + ": entry '" + name + "' is not a .npy file";
    Array array;
    error = extractEntry(zip.get(), zip_uint64_t(i), st, file.size(), npy);
    if (error.empty())
      error = parseNpy(npy.data(), npy.size(), array);
    if (!error.empty())
      return path + ": entry '" + name + "': " + error;
    array.name = name.substr(0, name.size() - 4);
    arrays.push_back(std::move(array));
  }
  out = std::move(arrays);
  return {};
}

namespace {

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

// 1980-01-01 00:00 local time, which libzip turns back into the DOS date
// 1980-01-01 and time 00:00: a fixed timestamp keeps output reproducible.
time_t dosEpoch() {
  std::tm tm{};
  tm.tm_year = 80;
  tm.tm_mday = 1;
  tm.tm_isdst = -1;
  return std::mktime(&tm);
}

// Adds one stored entry "<name>.npy" holding `header` then the array's data;
// both must outlive the archive.
std::string addStoredNpy(zip_t *zip, const Array &a, const std::vector<uint8_t> &header,
                         time_t mtime) {
  zip_buffer_fragment_t parts[2] = {
      {const_cast<uint8_t *>(header.data()), header.size()},
      {const_cast<uint8_t *>(a.data.data()), a.data.size()}};
  zip_error_t error;
  zip_error_init(&error);
  ZipSource source(zip_source_buffer_fragment_create(parts, a.data.empty() ? 1 : 2, 0, &error));
  std::string message;
  if (!source)
    message = describe(&error);
  zip_error_fini(&error);
  if (!message.empty())
    return message;
  const std::string name = a.name + ".npy";
  const zip_int64_t index = zip_file_add(zip, name.c_str(), source.get(), ZIP_FL_ENC_UTF_8);
  if (index < 0)
    return describe(zip_get_error(zip));
  source.release(); // the archive owns it now
  const zip_uint64_t i = zip_uint64_t(index);
  if (zip_set_file_compression(zip, i, ZIP_CM_STORE, 0) != 0 ||
      zip_file_set_mtime(zip, i, mtime, 0) != 0 ||
      zip_file_set_external_attributes(zip, i, 0, ZIP_OPSYS_UNIX, 0100644u << 16) != 0)
    return describe(zip_get_error(zip));
  return {};
}

// The archive of `arrays` (stored .npy entries) in memory.
std::string buildArchive(const std::vector<Array> &arrays, ZipSource &out) {
  zip_error_t error;
  zip_error_init(&error);
  ZipSource memory(zip_source_buffer_create(nullptr, 0, 0, &error));
  ZipArchive zip;
  if (memory) {
    zip_source_keep(memory.get()); // still ours after zip_close
    zip.reset(zip_open_from_source(memory.get(), ZIP_TRUNCATE, &error));
    if (!zip)
      zip_source_free(memory.get()); // the reference the archive did not take
  }
  std::string message = zip ? std::string() : describe(&error);
  zip_error_fini(&error);
  if (!message.empty())
    return message;

  std::vector<std::vector<uint8_t>> headers;
  headers.reserve(arrays.size()); // the entries point into them until zip_close
  const time_t mtime = dosEpoch();
  for (const Array &a : arrays) {
    headers.push_back(npyHeader(a, descrOf(a.dtype)));
    message = addStoredNpy(zip.get(), a, headers.back(), mtime);
    if (!message.empty())
      return message;
  }
  if (zip_close(zip.get()) != 0)
    return describe(zip_get_error(zip.get()));
  zip.release(); // zip_close freed it
  out = std::move(memory);
  return {};
}

// Copies the bytes of `source` to `f`.
std::string writeSource(zip_source_t *source, FILE *f) {
  if (zip_source_open(source) != 0)
    return describe(zip_source_error(source));
  std::vector<uint8_t> chunk(1 << 20);
  std::string error;
  for (;;) {
    const zip_int64_t n = zip_source_read(source, chunk.data(), chunk.size());
    if (n < 0) {
      error = describe(zip_source_error(source));
      break;
    }
    if (n == 0)
      break;
    if (std::fwrite(chunk.data(), 1, size_t(n), f) != size_t(n)) {
      error = std::string("write error: ") + std::strerror(errno);
      break;
    }
  }
  zip_source_close(source);
  return error;
}

// The end of central directory record of an archive with no entries (libzip
// writes no file at all for one).
const uint8_t kEmptyZip[kEmptyZipSize] = {0x50, 0x4b, 0x05, 0x06};

} // namespace

std::string writeNpz(const std::string &path,
                     const std::vector<Array> &arrays) {
  std::set<std::string> names;
  for (const Array &a : arrays) {
    std::string error = checkWritable(a, names);
    if (!error.empty())
      return path + ": " + error;
  }
  if (arrays.empty())
    return writeFile(path, kEmptyZip, sizeof kEmptyZip);
  ZipSource archive;
  std::string error = buildArchive(arrays, archive);
  if (!error.empty())
    return path + ": " + error;
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return path + ": cannot open for writing: " + std::strerror(errno);
  error = writeSource(archive.get(), f);
  if (std::fclose(f) != 0 && error.empty())
    error = std::string("write error: ") + std::strerror(errno);
  if (!error.empty()) {
    std::remove(path.c_str());
    return path + ": " + error;
  }
  return {};
}

} // namespace kiln::host
