#include "tools/npz.hpp"

#include <zip.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>

namespace pock::tools {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

Status npy_error(const std::string& what, const std::string& why) {
  return Status(Code::kInvalidArgument, what + ": not a valid .npy array (" + why + ")");
}

// Reads the value of `key` in the header dict, e.g. 'descr': '<f4' -> "'<f4'".
bool dict_value(const std::string& header, const std::string& key, std::string* out) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return false;
  size_t p = header.find(':', k);
  if (p == std::string::npos) return false;
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  size_t end = p;
  if (p < header.size() && header[p] == '(') {
    end = header.find(')', p);
    if (end == std::string::npos) return false;
    ++end;
  } else if (p < header.size() && header[p] == '\'') {
    end = header.find('\'', p + 1);
    if (end == std::string::npos) return false;
    ++end;
  } else {
    while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  }
  *out = header.substr(p, end - p);
  return true;
}

Result<Shape> parse_shape_tuple(const std::string& tuple, const std::string& what) {
  Shape shape;
  const char* p = tuple.data() + 1;  // skip '('
  const char* end = tuple.data() + tuple.size() - 1;
  while (p < end) {
    while (p < end && (*p == ' ' || *p == ',')) ++p;
    if (p >= end) break;
    int64_t d = 0;
    auto [next, ec] = std::from_chars(p, end, d);
    if (ec != std::errc() || d < 0) return npy_error(what, "bad shape " + tuple);
    shape.push_back(d);
    p = next;
    while (p < end && *p == 'L') ++p;  // Python 2 longs
  }
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d > 0 && n > (int64_t{1} << 40) / d) return npy_error(what, "shape " + tuple + " is too large");
    n *= d;
  }
  return shape;
}

}  // namespace

size_t NpyArray::item_size() const {
  if (descr.size() < 3) return 0;
  size_t n = 0;
  std::from_chars(descr.data() + 2, descr.data() + descr.size(), n);
  return n;
}

Result<DType> dtype_of_descr(const std::string& d) {
  if (d == "<f4") return DType::kF32;
  if (d == "<f2") return DType::kF16;
  if (d == "<i8") return DType::kI64;
  if (d == "<i4") return DType::kI32;
  if (d == "|i1") return DType::kI8;
  if (d == "|u1") return DType::kU8;
  if (d == "|b1") return DType::kBool;
  if (d == "<f8") return DType::kF64;
  if (d == "<i2") return DType::kI16;
  // "<u2" stays unmapped: it is how bf16 is written as well as u16, and only the model can tell which.
  if (d == "<u4") return DType::kU32;
  if (d == "<u8") return DType::kU64;
  return Status(Code::kInvalidArgument, "numpy dtype '" + d + "' has no pock dtype");
}

std::string descr_of_dtype(DType dt) {
  switch (dt) {
    case DType::kF32: return "<f4";
    case DType::kF16: return "<f2";
    case DType::kBF16: return "<u2";  // numpy has no bfloat16: raw bits
    case DType::kI32: return "<i4";
    case DType::kI64: return "<i8";
    case DType::kI8: return "|i1";
    case DType::kU8: return "|u1";
    case DType::kBool: return "|b1";
    case DType::kF64: return "<f8";
    case DType::kI16: return "<i2";
    case DType::kU16: return "<u2";
    case DType::kU32: return "<u4";
    case DType::kU64: return "<u8";
  }
  return "|u1";
}

Result<NpyArray> parse_npy(const uint8_t* bytes, size_t size, const std::string& what) {
  if (size < 10 || std::memcmp(bytes, kMagic, kMagicSize) != 0) return npy_error(what, "no NUMPY magic");
  const uint8_t major = bytes[6];
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return npy_error(what, "truncated header");
    header_len = bytes[8] | (bytes[9] << 8) | (static_cast<size_t>(bytes[10]) << 16) | (static_cast<size_t>(bytes[11]) << 24);
    offset = 12;
  } else {
    return npy_error(what, "format version " + std::to_string(major));
  }
  if (header_len > size - offset) return npy_error(what, "truncated header");
  const std::string header(reinterpret_cast<const char*>(bytes + offset), header_len);
  std::string descr, fortran, shape;
  if (!dict_value(header, "descr", &descr) || !dict_value(header, "fortran_order", &fortran) ||
      !dict_value(header, "shape", &shape) || descr.size() < 2 || shape.size() < 2) {
    return npy_error(what, "header lacks descr, fortran_order or shape");
  }
  NpyArray a;
  a.descr = descr.substr(1, descr.size() - 2);
  if (a.descr.size() >= 2 && a.descr[0] == '=') a.descr[0] = '<';  // native order on a little-endian host
  if (a.descr[0] == '>') return npy_error(what, "big-endian dtype " + a.descr + "; use arr.astype('<" + a.descr.substr(1) + "')");
  if (fortran.find("True") != std::string::npos) {
    return npy_error(what, "Fortran-ordered array; save np.ascontiguousarray(arr) instead");
  }
  POCK_ASSIGN_OR_RETURN(a.shape, parse_shape_tuple(shape, what));
  const size_t item = a.item_size();
  if (item == 0 || item > 16 || a.descr[1] == 'O' || a.descr[1] == 'U' || a.descr[1] == 'S' || a.descr[1] == 'V') {
    return npy_error(what, "unsupported dtype '" + a.descr + "'");
  }
  const size_t data_offset = offset + header_len;
  const size_t need = static_cast<size_t>(a.count()) * item;
  if (size - data_offset != need) {
    return npy_error(what, "holds " + std::to_string(size - data_offset) + " data bytes, shape needs " + std::to_string(need));
  }
  a.data.assign(bytes + data_offset, bytes + size);
  return a;
}

std::vector<uint8_t> serialize_npy(const NpyArray& a) {
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i) shape += std::to_string(a.shape[i]) + (a.shape.size() == 1 ? "," : i + 1 < a.shape.size() ? ", " : "");
  shape += ")";
  std::string header = "{'descr': '" + a.descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts at a multiple of 64 bytes; the header ends with a newline.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + kMagicSize);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), a.data.begin(), a.data.end());
  return out;
}

namespace {

using ZipPtr = std::unique_ptr<zip_t, decltype(&zip_discard)>;

Status zip_failure(int code, const std::string& what) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  const std::string why = zip_error_strerror(&e);
  zip_error_fini(&e);
  return Status(code == ZIP_ER_NOENT || code == ZIP_ER_OPEN ? Code::kIo : Code::kInvalidArgument,
                "cannot read '" + what + "' as .npz (a zip of .npy files, from np.savez): " + why);
}

// Deflate cannot expand more than 1032:1; a larger claim is a forged size.
constexpr uint64_t kMaxDeflateRatio = 1032;

// Reads every .npy entry. An entry's bytes are read in bounded chunks, so memory follows the
// bytes the archive really yields, never a size field alone.
Result<NpzFile> read_entries(zip_t* z, uint64_t archive_bytes, const std::string& what) {
  NpzFile arrays;
  const zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE) ||
        !(st.valid & ZIP_STAT_COMP_SIZE) || !(st.valid & ZIP_STAT_COMP_METHOD)) {
      return Status(Code::kInvalidArgument, what + ": unreadable zip entry " + std::to_string(i));
    }
    std::string name = st.name ? st.name : "";
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0) continue;
    name.resize(name.size() - 4);
    const uint64_t limit = st.comp_method == ZIP_CM_STORE ? st.comp_size : st.comp_size * kMaxDeflateRatio;
    if (st.comp_size > archive_bytes || st.size > limit) {
      return Status(Code::kInvalidArgument, what + ": entry '" + name + "' claims " + std::to_string(st.size) +
                                                " bytes from " + std::to_string(st.comp_size) + " stored in a " +
                                                std::to_string(archive_bytes) + "-byte file: corrupt");
    }
    std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(zip_fopen_index(z, static_cast<zip_uint64_t>(i), 0), zip_fclose);
    if (!f) return Status(Code::kInvalidArgument, what + ": cannot open entry '" + name + "': " + zip_strerror(z));
    constexpr size_t kChunk = size_t{1} << 20;
    std::vector<uint8_t> bytes;
    while (bytes.size() < st.size) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, st.size - bytes.size()));
      const size_t at = bytes.size();
      bytes.resize(at + want);
      const zip_int64_t r = zip_fread(f.get(), bytes.data() + at, want);
      if (r <= 0) return Status(Code::kInvalidArgument, what + ": entry '" + name + "' is truncated or corrupt");
      bytes.resize(at + static_cast<size_t>(r));
    }
    POCK_ASSIGN_OR_RETURN(NpyArray a, parse_npy(bytes.data(), bytes.size(), what + ": '" + name + "'"));
    arrays[name] = std::move(a);
  }
  return arrays;
}

}  // namespace

Result<NpzFile> read_npz(const std::string& path) {
  int err = 0;
  ZipPtr z(zip_open(path.c_str(), ZIP_RDONLY, &err), zip_discard);
  if (!z) return zip_failure(err, path);
  std::error_code ec;
  const uint64_t bytes = std::filesystem::file_size(path, ec);
  if (ec) return Status(Code::kIo, "cannot read '" + path + "': " + ec.message());
  return read_entries(z.get(), bytes, path);
}

Result<NpzFile> read_npz_bytes(const uint8_t* data, size_t size, const std::string& what) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(data, size, 0, &error);
  if (!source) {
    zip_error_fini(&error);
    return Status(Code::kOutOfMemory, what + ": cannot read the bytes");
  }
  ZipPtr z(zip_open_from_source(source, ZIP_RDONLY, &error), zip_discard);
  if (!z) {
    zip_source_free(source);
    const int code = zip_error_code_zip(&error);
    zip_error_fini(&error);
    return zip_failure(code, what);
  }
  zip_error_fini(&error);
  return read_entries(z.get(), size, what);
}

Status write_npz(const std::string& path, const NpzFile& arrays, bool compressed) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!z) return Status(Code::kIo, "cannot create '" + path + "'");
  // libzip reads the buffers at zip_close; keep them alive until then.
  std::vector<std::vector<uint8_t>> buffers;
  buffers.reserve(arrays.size());
  for (const auto& [name, array] : arrays) {
    buffers.push_back(serialize_npy(array));
    zip_source_t* src = zip_source_buffer(z, buffers.back().data(), buffers.back().size(), 0);
    const zip_int64_t index = src ? zip_file_add(z, (name + ".npy").c_str(), src, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8) : -1;
    if (index < 0) {
      if (src) zip_source_free(src);
      const std::string why = zip_strerror(z);
      zip_discard(z);
      return Status(Code::kIo, "cannot add '" + name + "' to '" + path + "': " + why);
    }
    zip_set_file_compression(z, static_cast<zip_uint64_t>(index), compressed ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
  }
  if (zip_close(z) != 0) {
    const std::string why = zip_strerror(z);
    zip_discard(z);
    return Status(Code::kIo, "cannot write '" + path + "': " + why);
  }
  return Status::ok();
}

namespace {

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

uint16_t to_half(float f) {
  // Round to nearest even through the float bit pattern (normal range; overflow saturates to inf).
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000;
  const float a = std::fabs(f);
  if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7e00);
  if (a >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00);
  if (a < 6.103515625e-05f) return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a * 16777216.0f)));
  uint32_t bits = std::bit_cast<uint32_t>(a);
  bits += 0xfff + ((bits >> 13) & 1);
  return static_cast<uint16_t>(sign | (((bits >> 13) - (112u << 10)) & 0x7fff));
}

}  // namespace

Result<std::vector<uint8_t>> convert_to(const NpyArray& a, DType dt, const std::string& name) {
  const int64_t n = a.count();
  const std::string want = descr_of_dtype(dt);
  if (a.descr == want) return a.data;
  std::vector<uint8_t> out(static_cast<size_t>(n) * dtype_size(dt));
  const uint8_t* in = a.data.data();
  auto refuse = [&]() {
    return Status(Code::kShapeMismatch, "array '" + name + "' is numpy " + a.descr + " but the model wants " + dtype_name(dt) +
                                            ": save it as " + want + " (arr.astype(...))");
  };
  if (dt == DType::kF32 && a.descr == "<f8") {
    for (int64_t i = 0; i < n; ++i) store(out.data() + 4 * i, static_cast<float>(load<double>(in + 8 * i)));
    return out;
  }
  if (dt == DType::kF16 && (a.descr == "<f4" || a.descr == "<f8")) {
    for (int64_t i = 0; i < n; ++i) {
      const float v = a.descr == "<f4" ? load<float>(in + 4 * i) : static_cast<float>(load<double>(in + 8 * i));
      store(out.data() + 2 * i, to_half(v));
    }
    return out;
  }
  const bool int_in = a.descr == "<i8" || a.descr == "<i4" || a.descr == "|u1" || a.descr == "|i1" || a.descr == "|b1";
  if ((dt == DType::kI64 || dt == DType::kI32) && int_in) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = 0;
      if (a.descr == "<i8") v = load<int64_t>(in + 8 * i);
      else if (a.descr == "<i4") v = load<int32_t>(in + 4 * i);
      else if (a.descr == "|i1") v = load<int8_t>(in + i);
      else v = in[i];
      if (dt == DType::kI32) {
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
          return Status(Code::kInvalidArgument, "array '" + name + "' value " + std::to_string(v) + " does not fit int32");
        }
        store(out.data() + 4 * i, static_cast<int32_t>(v));
      } else {
        store(out.data() + 8 * i, v);
      }
    }
    return out;
  }
  if ((dt == DType::kBool || dt == DType::kU8) && (a.descr == "|b1" || a.descr == "|u1")) return a.data;
  return refuse();
}

}  // namespace pock::tools
