// Reading, checking and caching the selected branch's index tensor from a .npy or text file.
#include "kernels/api/select_file.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <tuple>

#include "kernels/api/sha256.hpp"

namespace attn {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw SelectFileError("select file '" + path + "': " + what);
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, "cannot be read");
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A .npy file (format versions 1-3): its shape and little-endian int32 or int64 values.
std::vector<std::int64_t> npy_values(const std::string& path, const std::string& bytes,
                                     std::vector<std::int64_t>& shape) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    fail(path, "not a .npy file (no \\x93NUMPY magic)");
  const auto major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) |
                 static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(path, "truncated .npy header");
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | static_cast<unsigned char>(bytes[8 + i]);
    offset = 12;
  } else {
    fail(path, ".npy format version " + std::to_string(major) + " (1, 2 or 3 are read)");
  }
  if (bytes.size() < offset + header_len) fail(path, "truncated .npy header");
  const std::string header = bytes.substr(offset, header_len);
  auto field = [&](const std::string& key) {
    const std::size_t at = header.find("'" + key + "'");
    if (at == std::string::npos) fail(path, ".npy header has no '" + key + "'");
    return header.substr(header.find(':', at) + 1);
  };
  const std::string descr = field("descr");
  const bool i4 = descr.find("'<i4'") < descr.find(','), i8 = descr.find("'<i8'") < descr.find(',');
  if (!i4 && !i8)
    fail(path, "dtype " + descr.substr(0, descr.find(',')) + ": int32 ('<i4') or int64 ('<i8') is read");
  const std::string order = field("fortran_order");
  if (order.find("False") != order.find_first_not_of(' '))
    fail(path, "Fortran order: save the array C-contiguous");
  const std::string dims = field("shape");
  shape.clear();
  std::istringstream in(dims.substr(dims.find('(') + 1, dims.find(')') - dims.find('(') - 1));
  for (std::string token; std::getline(in, token, ',');) {
    if (token.find_first_not_of(' ') == std::string::npos) continue;
    try {
      shape.push_back(std::stoll(token));
    } catch (const std::exception&) {
      fail(path, ".npy shape " + dims.substr(0, dims.find(')') + 1) + " is not a tuple of integers");
    }
  }
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;
  const std::size_t width = i4 ? 4 : 8, data = offset + header_len;
  if (bytes.size() - data != static_cast<std::size_t>(n) * width)
    fail(path, "holds " + std::to_string((bytes.size() - data) / width) + " values for its shape's " +
                   std::to_string(n));
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (i4) {
      std::int32_t v = 0;
      std::memcpy(&v, bytes.data() + data + k * 4, 4);
      out[k] = v;
    } else {
      std::memcpy(&out[k], bytes.data() + data + k * 8, 8);
    }
  }
  return out;
}

std::vector<std::int64_t> text_values(const std::string& path, const std::string& bytes) {
  std::istringstream in(bytes);
  std::vector<std::int64_t> out;
  for (std::string token; in >> token;) {
    std::size_t used = 0;
    std::int64_t v = 0;
    try {
      v = std::stoll(token, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != token.size())
      fail(path, "value " + std::to_string(out.size()) + " '" + token + "' is not an integer");
    out.push_back(v);
  }
  return out;
}

}  // namespace

SelectFileTable read_select_file(const std::string& path, const Problem& p) {
  const std::int64_t l = p.select.block, n = p.select.count, nqb = p.select.query_blocks(p.seq_q);
  const std::vector<std::int64_t> want{p.batch, p.heads_kv, nqb, n};
  auto dims = [](const std::vector<std::int64_t>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {  // appended piece by piece: GCC 12's -Wrestrict
      if (i) s += ", ";
      s += std::to_string(v[i]);
    }
    return s + "]";
  };
  const std::string bytes = read_bytes(path);
  std::vector<std::int64_t> values;
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) {
    std::vector<std::int64_t> shape;
    values = npy_values(path, bytes, shape);
    if (shape != want)
      fail(path, "shape " + dims(shape) +
                     "; this problem's index tensor is [B, Hkv, ceil(Sq/l'), n] = " + dims(want));
  } else {
    values = text_values(path, bytes);
  }
  const auto expected = static_cast<std::size_t>(p.batch * p.heads_kv * nqb * n);
  if (values.size() != expected)
    fail(path, "holds " + std::to_string(values.size()) +
                   " values; this problem's index tensor [B, Hkv, ceil(Sq/l'), n] = " + dims(want) + " has " +
                   std::to_string(expected));
  SelectFileTable t;
  t.sha256 = sha256_hex(bytes);
  t.table.resize(expected);
  for (std::size_t row = 0; row < expected / static_cast<std::size_t>(n); ++row) {
    const std::int64_t qb = static_cast<std::int64_t>(row) % nqb;
    const std::int64_t rows = std::min(l, p.seq_q - qb * l);  // query rows of the block
    std::vector<std::int64_t> r(values.begin() + static_cast<std::ptrdiff_t>(row * n),
                                values.begin() + static_cast<std::ptrdiff_t>((row + 1) * n));
    for (std::size_t e = 0; e < r.size(); ++e)
      if (r[e] < -1 || r[e] > qb) {
        const std::int64_t b = static_cast<std::int64_t>(row) / nqb / p.heads_kv;
        const std::int64_t g = static_cast<std::int64_t>(row) / nqb % p.heads_kv;
        fail(path, "entry [" + std::to_string(b) + ", " + std::to_string(g) + ", " + std::to_string(qb) +
                       ", " + std::to_string(e) + "] = " + std::to_string(r[e]) +
                       ": a key block of query block " + std::to_string(qb) + " is 0.." + std::to_string(qb) +
                       " (causal), or -1 for none");
      }
    std::sort(r.begin(), r.end(), [](std::int64_t a, std::int64_t b) {
      return (a < 0 ? INT64_MAX : a) < (b < 0 ? INT64_MAX : b);
    });
    for (std::size_t e = 0; e + 1 < r.size(); ++e)
      if (r[e] >= 0 && r[e] == r[e + 1])
        fail(path,
             "query block row " + std::to_string(row) + " selects block " + std::to_string(r[e]) + " twice");
    for (std::size_t e = 0; e < r.size(); ++e) {
      t.table[row * static_cast<std::size_t>(n) + e] = static_cast<std::int32_t>(r[e]);
      if (r[e] >= 0) t.pairs += r[e] < qb ? rows * l : rows * (rows + 1) / 2;
    }
  }
  return t;
}

const std::vector<std::int32_t>& select_file_table(const Problem& p) {
  using Key = std::tuple<std::string, std::string, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                         std::int64_t>;
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<const SelectFileTable>> cache;
  const Key key{p.select.file, p.select.file_sha256, p.batch,       p.heads_kv,
                p.seq_q,       p.select.block,       p.select.count};
  const std::lock_guard lock(mutex);
  if (const auto it = cache.find(key); it != cache.end()) return it->second->table;
  auto t = std::make_shared<const SelectFileTable>(read_select_file(p.select.file, p));
  if (t->sha256 != p.select.file_sha256)
    fail(p.select.file, "changed since the sweep was planned (sha256 " + t->sha256.substr(0, 12) +
                            ", planned " + p.select.file_sha256.substr(0, 12) + "); plan the sweep again");
  return cache.emplace(key, std::move(t)).first->second->table;
}

}  // namespace attn
