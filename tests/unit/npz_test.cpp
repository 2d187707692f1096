// .npz reading and writing, cross-checked against numpy itself.
#include "kiln/host/npz.h"

#include "temp_dir_test.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>

namespace fs = std::filesystem;
using kiln::host::Array;
using kiln::host::DType;

namespace {

class NpzTest : public kiln::test::TempDirTest {
protected:
  // Runs a Python script (with numpy) and returns its exit status.
  int runPython(const std::string &script, const std::string &args) {
    const std::string scriptPath = path("script.py");
    EXPECT_EQ(kiln::host::writeFile(scriptPath, script.data(), script.size()),
              "");
    const std::string command =
        std::string(KILN_TEST_PYTHON) + " " + scriptPath + " " + args;
    return std::system(command.c_str());
  }

  void requireNumpy() {
    const std::string command =
        std::string(KILN_TEST_PYTHON) + " -c 'import numpy' 2>/dev/null";
    if (std::system(command.c_str()) != 0)
      GTEST_SKIP() << KILN_TEST_PYTHON << " cannot import numpy";
  }
};

template <typename T>
Array makeArray(const std::string &name, DType dtype,
                std::vector<int64_t> shape, const std::vector<T> &values) {
  Array a;
  a.name = name;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.data.resize(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

// Arrays covering every writable dtype, a scalar and an empty array.
std::vector<Array> sampleArrays() {
  std::vector<float> f32(24);
  for (size_t i = 0; i < f32.size(); ++i)
    f32[i] = 0.5f * float(i) - 3.0f;
  return {
      Array::fromF32("f32", {2, 3, 4}, f32.data()),
      makeArray<uint16_t>("f16", DType::F16, {3},
                          {0x3e00, 0xc000, 0x7bff}), // 1.5, -2, 65504
      makeArray<int8_t>("i8", DType::I8, {2, 2}, {-128, -1, 0, 127}),
      makeArray<uint8_t>("u8", DType::U8, {}, {200}),
      makeArray<int16_t>("i16", DType::I16, {0, 3}, {}),
      makeArray<uint16_t>("u16", DType::U16, {2}, {0, 65535}),
      makeArray<int32_t>("i32", DType::I32, {1, 3}, {-7, 0, 1 << 30}),
      makeArray<int64_t>("i64", DType::I64, {2}, {-(int64_t(1) << 40), 7}),
      makeArray<double>("f64", DType::F64, {2}, {0.1, -1e300}),
      makeArray<uint8_t>("flags", DType::Bool, {3}, {1, 0, 1}),
  };
}

std::map<std::string, Array> byName(const std::vector<Array> &arrays) {
  std::map<std::string, Array> m;
  for (const Array &a : arrays)
    m[a.name] = a;
  return m;
}

TEST_F(NpzTest, RoundTripsEveryDtype) {
  const std::vector<Array> written = sampleArrays();
  ASSERT_EQ(kiln::host::writeNpz(path("a.npz"), written), "");
  std::vector<Array> read;
  ASSERT_EQ(kiln::host::readNpz(path("a.npz"), read), "");
  ASSERT_EQ(read.size(), written.size());
  for (size_t i = 0; i < read.size(); ++i) {
    SCOPED_TRACE(written[i].name);
    EXPECT_EQ(read[i].name, written[i].name);
    EXPECT_EQ(read[i].dtype, written[i].dtype);
    EXPECT_EQ(read[i].shape, written[i].shape);
    EXPECT_EQ(read[i].data, written[i].data);
  }
}

TEST_F(NpzTest, ConvertsToF32) {
  const auto arrays = byName(sampleArrays());
  EXPECT_EQ(arrays.at("f16").toF32(),
            (std::vector<float>{1.5f, -2.0f, 65504.0f}));
  EXPECT_EQ(arrays.at("i8").toF32(), (std::vector<float>{-128, -1, 0, 127}));
  EXPECT_EQ(arrays.at("u8").toF32(), (std::vector<float>{200}));
  EXPECT_EQ(arrays.at("u16").toF32(), (std::vector<float>{0, 65535}));
  EXPECT_EQ(arrays.at("flags").toF32(), (std::vector<float>{1, 0, 1}));
  EXPECT_EQ(arrays.at("i16").toF32().size(), 0u);
  EXPECT_EQ(arrays.at("u8").numElements(), 1u);

  Array bf16 =
      makeArray<uint16_t>("b", DType::BF16, {2}, {0x3fc0, 0xc100}); // 1.5, -8
  EXPECT_EQ(bf16.toF32(), (std::vector<float>{1.5f, -8.0f}));
  Array subnormal = makeArray<uint16_t>("s", DType::F16, {2}, {0x0001, 0xfc00});
  EXPECT_EQ(subnormal.toF32()[0], std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(subnormal.toF32()[1]) && subnormal.toF32()[1] < 0);
}

TEST_F(NpzTest, RejectsUnwritableArrays) {
  const std::string out = path("bad.npz");
  Array bf16 = makeArray<uint16_t>("w", DType::BF16, {1}, {0x3f80});
  EXPECT_EQ(
      kiln::host::writeNpz(out, {bf16}),
      out + ": array 'w': bf16 has no numpy dtype; convert it to f32 first");
  Array a = makeArray<float>("x", DType::F32, {2}, {1, 2});
  EXPECT_EQ(kiln::host::writeNpz(out, {a, a}),
            out + ": duplicate array name 'x'");
  a.shape = {3};
  EXPECT_EQ(kiln::host::writeNpz(out, {a}),
            out + ": array 'x': data holds 8 bytes, shape and dtype need 12");
  EXPECT_FALSE(fs::exists(out));
}

// np.savez and np.savez_compressed output, plus zips holding .npy versions 2
// and 3, Fortran-order and big-endian arrays.
TEST_F(NpzTest, ReadsWhatNumpyWrites) {
  requireNumpy();
  const char *script = R"PY(
import io, sys, zipfile
import numpy as np
arrays = {
    'f32': (np.arange(24, dtype='<f4') * 0.5 - 3).reshape(2, 3, 4),
    'f16': np.array([1.5, -2.0, 65504, 6e-8], dtype='<f2'),
    'i8': np.array([[-128, -1], [0, 127]], dtype='i1'),
    'u8': np.array(200, dtype='u1'),
    'i16': np.zeros((0, 3), dtype='<i2'),
    'u16': np.array([0, 65535], dtype='<u2'),
    'i32': np.array([[-7, 0, 1 << 30]], dtype='<i4'),
    'i64': np.array([-(1 << 40), 7], dtype='<i8'),
    'f64': np.array([0.1, -1e300]),
    'flags': np.array([True, False, True]),
    'fortran': np.asfortranarray(np.arange(24, dtype='<f4').reshape(2, 3, 4)),
    'big': np.arange(6, dtype='>i4').reshape(2, 3),
}
np.savez(sys.argv[1], **arrays)
np.savez_compressed(sys.argv[2], **arrays)
with zipfile.ZipFile(sys.argv[3], 'w', zipfile.ZIP_DEFLATED) as z:
    for version in [(1, 0), (2, 0), (3, 0)]:
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.arange(5, dtype='<i4'), version=version)
        z.writestr('v%d.npy' % version[0], buf.getvalue())
    # A zip64 local header (as zipfile writes for entries it cannot size).
    with z.open('zip64.npy', 'w', force_zip64=True) as f:
        np.lib.format.write_array(f, np.arange(5, dtype='<i4'))
)PY";
  ASSERT_EQ(runPython(script, path("stored.npz") + " " +
                                  path("compressed.npz") + " " +
                                  path("versions.npz")),
            0);

  for (const char *file : {"stored.npz", "compressed.npz"}) {
    SCOPED_TRACE(file);
    std::vector<Array> read;
    ASSERT_EQ(kiln::host::readNpz(path(file), read), "");
    ASSERT_EQ(read.size(), 12u);
    const auto arrays = byName(read);
    const auto expected = byName(sampleArrays());
    for (const char *name :
         {"f32", "i8", "u8", "i16", "u16", "i32", "i64", "f64", "flags"}) {
      SCOPED_TRACE(name);
      EXPECT_EQ(arrays.at(name).dtype, expected.at(name).dtype);
      EXPECT_EQ(arrays.at(name).shape, expected.at(name).shape);
      EXPECT_EQ(arrays.at(name).data, expected.at(name).data);
    }
    EXPECT_EQ(
        arrays.at("f16").toF32(),
        (std::vector<float>{1.5f, -2.0f, 65504.0f, std::ldexp(1.0f, -24)}));

    const Array &fortran = arrays.at("fortran");
    EXPECT_EQ(fortran.shape, (std::vector<int64_t>{2, 3, 4}));
    std::vector<float> iota(24);
    for (size_t i = 0; i < iota.size(); ++i)
      iota[i] = float(i);
    EXPECT_EQ(fortran.toF32(), iota);

    const Array &big = arrays.at("big");
    EXPECT_EQ(big.dtype, DType::I32);
    EXPECT_EQ(big.toF32(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  }

  std::vector<Array> versions;
  ASSERT_EQ(kiln::host::readNpz(path("versions.npz"), versions), "");
  ASSERT_EQ(versions.size(), 4u);
  for (const Array &a : versions) {
    SCOPED_TRACE(a.name);
    EXPECT_EQ(a.dtype, DType::I32);
    EXPECT_EQ(a.toF32(), (std::vector<float>{0, 1, 2, 3, 4}));
  }
}

TEST_F(NpzTest, NumpyReadsWhatWeWrite) {
  requireNumpy();
  std::vector<Array> arrays = sampleArrays();
  // A long name and a large array exercise header padding and bigger entries.
  std::vector<float> big(100000);
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = float(i % 1000) * 0.25f - 7.0f;
  arrays.push_back(
      Array::fromF32(std::string(300, 'n'), {100, 1000}, big.data()));
  ASSERT_EQ(kiln::host::writeNpz(path("ours.npz"), arrays), "");

  const char *script = R"PY(
import sys
import numpy as np
z = np.load(sys.argv[1])
assert sorted(z.files) == sorted(['f32', 'f16', 'i8', 'u8', 'i16', 'u16', 'i32', 'i64', 'f64',
                                  'flags', 'n' * 300]), z.files
def same(name, expected, dtype):
    a = z[name]
    assert a.dtype == np.dtype(dtype), (name, a.dtype)
    assert a.shape == np.shape(expected), (name, a.shape)
    assert np.array_equal(a, np.array(expected, dtype=dtype)), (name, a)
same('f32', (np.arange(24, dtype='<f4') * 0.5 - 3).reshape(2, 3, 4), '<f4')
same('f16', [1.5, -2.0, 65504], '<f2')
same('i8', [[-128, -1], [0, 127]], 'i1')
same('u8', np.array(200), 'u1')
same('i16', np.zeros((0, 3)), '<i2')
same('u16', [0, 65535], '<u2')
same('i32', [[-7, 0, 1 << 30]], '<i4')
same('i64', [-(1 << 40), 7], '<i8')
same('f64', [0.1, -1e300], '<f8')
same('flags', [True, False, True], '?')
big = z['n' * 300]
assert big.shape == (100, 1000)
assert np.array_equal(big.ravel(), (np.arange(100000) % 1000) * 0.25 - 7), 'big mismatch'
)PY";
  EXPECT_EQ(runPython(script, path("ours.npz")), 0);
  if (std::system("command -v unzip >/dev/null 2>&1") == 0) {
    const std::string command = "unzip -tq " + path("ours.npz") + " >/dev/null";
    EXPECT_EQ(std::system(command.c_str()), 0);
  }
}

// Stored entries with a fixed 1980-01-01 timestamp: the same arrays give the
// same bytes, whatever the time zone; an empty list gives an empty archive.
TEST_F(NpzTest, WritesReproducibleStoredArchives) {
  const std::vector<Array> arrays = sampleArrays();
  ASSERT_EQ(kiln::host::writeNpz(path("a.npz"), arrays), "");
  const char *savedTz = std::getenv("TZ");
  const std::string tz = savedTz ? savedTz : "";
  setenv("TZ", "KLN+5", 1); // POSIX form: needs no tzdata
  tzset();
  ASSERT_EQ(kiln::host::writeNpz(path("b.npz"), arrays), "");
  if (savedTz)
    setenv("TZ", tz.c_str(), 1);
  else
    unsetenv("TZ");
  tzset();
  std::vector<uint8_t> a, b;
  ASSERT_EQ(kiln::host::readFile(path("a.npz"), a), "");
  ASSERT_EQ(kiln::host::readFile(path("b.npz"), b), "");
  EXPECT_EQ(a, b);

  ASSERT_EQ(kiln::host::writeNpz(path("empty.npz"), {}), "");
  std::vector<Array> read = arrays;
  ASSERT_EQ(kiln::host::readNpz(path("empty.npz"), read), "");
  EXPECT_TRUE(read.empty());

  requireNumpy();
  const char *script = R"PY(
import sys, zipfile
import numpy as np
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        assert info.compress_type == zipfile.ZIP_STORED, (info.filename, info.compress_type)
        assert info.date_time == (1980, 1, 1, 0, 0, 0), (info.filename, info.date_time)
assert len(np.load(sys.argv[2]).files) == 0
)PY";
  EXPECT_EQ(runPython(script, path("a.npz") + " " + path("empty.npz")), 0);
}

TEST_F(NpzTest, ReportsMissingAndGarbageFiles) {
  std::vector<Array> out;
  const std::string missing = path("missing.npz");
  EXPECT_EQ(kiln::host::readNpz(missing, out),
            missing + ": cannot open: No such file or directory");
  EXPECT_EQ(kiln::host::readNpz(dir_.string(), out),
            dir_.string() + ": not a regular file");

  const std::string empty = path("empty.npz");
  ASSERT_EQ(kiln::host::writeFile(empty, "", 0), "");
  EXPECT_EQ(kiln::host::readNpz(empty, out),
            empty + ": not a zip file (too short)");

  const std::string garbage = path("garbage.npz");
  std::string bytes(4096, '\0');
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = char((i * 2654435761u) >> 13);
  ASSERT_EQ(kiln::host::writeFile(garbage, bytes.data(), bytes.size()), "");
  EXPECT_EQ(kiln::host::readNpz(garbage, out),
            garbage + ": not a zip file");
  EXPECT_TRUE(out.empty());
}

// Every truncation fails cleanly; every single-byte corruption either fails
// or (for fields nobody reads, such as timestamps) still loads.
TEST_F(NpzTest, SurvivesTruncationAndCorruption) {
  const std::string good = path("good.npz");
  ASSERT_EQ(kiln::host::writeNpz(good, sampleArrays()), "");
  std::vector<uint8_t> bytes;
  ASSERT_EQ(kiln::host::readFile(good, bytes), "");

  const std::string bad = path("bad.npz");
  std::vector<Array> out;
  for (size_t len = 0; len < bytes.size(); ++len) {
    ASSERT_EQ(kiln::host::writeFile(bad, bytes.data(), len), "");
    const std::string error = kiln::host::readNpz(bad, out);
    ASSERT_NE(error, "") << "truncated to " << len << " bytes";
    ASSERT_EQ(error.rfind(bad + ": ", 0), 0u) << error;
    ASSERT_TRUE(out.empty());
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<uint8_t> corrupt = bytes;
    corrupt[i] ^= 0x5a;
    ASSERT_EQ(kiln::host::writeFile(bad, corrupt.data(), corrupt.size()), "");
    kiln::host::readNpz(bad, out);
  }
}

TEST_F(NpzTest, DetectsCorruptCompressedData) {
  requireNumpy();
  ASSERT_EQ(
      runPython(
          "import sys, numpy as np\n"
          "np.savez_compressed(sys.argv[1], x=np.arange(1000, dtype='<f4'))\n",
          path("c.npz")),
      0);
  std::vector<uint8_t> bytes;
  ASSERT_EQ(kiln::host::readFile(path("c.npz"), bytes), "");
  std::vector<Array> out;
  const std::string bad = path("bad.npz");
  size_t failures = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<uint8_t> corrupt = bytes;
    corrupt[i] ^= 0xff;
    ASSERT_EQ(kiln::host::writeFile(bad, corrupt.data(), corrupt.size()), "");
    failures += !kiln::host::readNpz(bad, out).empty();
  }
  // Everything but a few unread header fields is covered by a check or the CRC.
  EXPECT_GT(failures, bytes.size() * 8 / 10);
}

TEST_F(NpzTest, RejectsNonNpyEntries) {
  requireNumpy();
  ASSERT_EQ(runPython("import sys, zipfile\n"
                      "with zipfile.ZipFile(sys.argv[1], 'w') as z:\n"
                      "    z.writestr('notes.txt', 'hello')\n",
                      path("z.npz")),
            0);
  std::vector<Array> out;
  EXPECT_EQ(kiln::host::readNpz(path("z.npz"), out),
            path("z.npz") + ": entry 'notes.txt' is not a .npy file");
}

TEST_F(NpzTest, ReadsAndWritesFiles) {
  const std::string p = path("raw.bin");
  const char payload[] = "kiln";
  ASSERT_EQ(kiln::host::writeFile(p, payload, 4), "");
  std::vector<uint8_t> back;
  ASSERT_EQ(kiln::host::readFile(p, back), "");
  EXPECT_EQ(std::string(back.begin(), back.end()), "kiln");
  const std::string unwritable = path("no/such/dir/raw.bin");
  EXPECT_EQ(kiln::host::writeFile(unwritable, payload, 4),
            unwritable +
                ": cannot open for writing: No such file or directory");
}

} // namespace
