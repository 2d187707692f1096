// NumPy .npy/.npz files: the exchange format for inputs, outputs and
// references.
//
// Reads what np.savez and np.savez_compressed write (stored and deflated zip
// entries, zip64 included, .npy format versions 1.0, 2.0 and 3.0,
// Fortran-order arrays are converted to C order) and writes stored zips that
// numpy and `unzip -t` accept, the same bytes for the same arrays. The zip
// container is libzip's; the .npy parser and writer are kiln's.
#ifndef KILN_HOST_NPZ_H
#define KILN_HOST_NPZ_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::host {

// npy descr: F32 '<f4', F16 '<f2', I8 '|i1', U8 '|u1', I16 '<i2', U16 '<u2',
// I32 '<i4', I64 '<i8', F64 '<f8', Bool '|b1'. BF16 has no numpy type: it can
// be held in an Array but not written (convert it to F32 first).
enum class DType { F32, F16, BF16, I8, U8, I16, U16, I32, I64, F64, Bool };

const char *toString(DType dtype); // "f32", "f16", ..., "bool"
size_t dtypeBytes(DType dtype);
std::string shapeString(const std::vector<int64_t> &shape); // "[2, 3]"

struct Array {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape; // empty for a scalar
  std::vector<uint8_t> data;  // C order, little-endian

  size_t numElements() const;
  size_t elementBytes() const;
  // Every dtype converts (integers and bools by value, f16/bf16 exactly).
  std::vector<float> toF32() const;
  static Array fromF32(std::string name, std::vector<int64_t> shape,
                       const float *p);
};

// Each returns an empty string on success, else a message naming the file and
// the problem. On failure `out` is left empty.
std::string readNpz(const std::string &path, std::vector<Array> &out);
// Arrays need distinct, non-empty names; each becomes the entry "<name>.npy".
std::string writeNpz(const std::string &path, const std::vector<Array> &arrays);

std::string readFile(const std::string &path, std::vector<uint8_t> &out);
std::string writeFile(const std::string &path, const void *data, size_t size);

} // namespace kiln::host

#endif // KILN_HOST_NPZ_H
