// NSA's selected branch with its index tensor from a file: .npy (int32, int64) and text, row
// normalisation, the pair count, refusals naming the entry, the per-process cache and its sha256
// guard, and the oracle on rows that lack their diagonal block or see nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "kernels/api/select_file.hpp"
#include "kernels/api/selected_blocks.hpp"
#include "kernels/cpu/cpu_reference.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

fs::path temp_file(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("attnscope-select-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

// A .npy v1 file of `values` with `shape`, int32 or int64.
void write_npy(const fs::path& path, const std::vector<std::int64_t>& shape,
               const std::vector<std::int64_t>& values, bool int64) {
  std::string dims;
  for (const std::int64_t d : shape) dims += std::to_string(d) + ", ";
  std::string header = std::string("{'descr': '") + (int64 ? "<i8" : "<i4") +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<std::uint16_t>(header.size());
  f.put(static_cast<char>(len & 0xff));
  f.put(static_cast<char>(len >> 8));
  f << header;
  for (const std::int64_t v : values) {
    if (int64) {
      f.write(reinterpret_cast<const char*>(&v), 8);
    } else {
      const auto w = static_cast<std::int32_t>(v);
      f.write(reinterpret_cast<const char*>(&w), 4);
    }
  }
}

void write_text(const fs::path& path, const std::vector<std::int64_t>& values) {
  std::ofstream f(path);
  for (const std::int64_t v : values) f << v << ' ';
  f << '\n';
}

// B=1, Hkv=2, S=200, l'=64 (4 query blocks, the last of 8 rows), n=3.
Problem shaped() {
  Problem p;
  p.heads_q = 4;
  p.heads_kv = 2;
  p.seq_q = p.seq_kv = 200;
  p.head_dim = p.head_dim_v = 4;
  p.dtype = DType::fp32;
  p.select.block = 64;
  p.select.count = 3;
  return p;
}

// Rows out of order, padding first, a row without its diagonal block, one with none at all.
const std::vector<std::int64_t> kValues = {
    0,  -1, -1,  // g0 q0: the diagonal only
    -1, 1,  0,   // g0 q1: both, unordered
    1,  -1, -1,  // g0 q2: block 1 alone (no diagonal)
    3,  0,  2,   // g0 q3: 8 rows
    -1, -1, -1,  // g1 q0: nothing
    0,  -1, -1,  // g1 q1: block 0 only
    2,  1,  0,   // g1 q2
    -1, 3,  -1,  // g1 q3
};

TEST(SelectFile, NpyAndTextReadTheSameNormalisedTableAndPairs) {
  const Problem p = shaped();
  write_npy(temp_file("t32.npy"), {1, 2, 4, 3}, kValues, false);
  write_npy(temp_file("t64.npy"), {1, 2, 4, 3}, kValues, true);
  write_text(temp_file("t.txt"), kValues);
  const SelectFileTable a = read_select_file(temp_file("t32.npy").string(), p);
  const SelectFileTable b = read_select_file(temp_file("t64.npy").string(), p);
  const SelectFileTable c = read_select_file(temp_file("t.txt").string(), p);
  EXPECT_EQ(a.table, b.table);
  EXPECT_EQ(a.table, c.table);
  EXPECT_EQ(a.table, (std::vector<std::int32_t>{0,  -1, -1, 0, 1,  -1, 1, -1, -1, 0, 2,  3,
                                                -1, -1, -1, 0, -1, -1, 0, 1,  2,  3, -1, -1}));
  // g0: 64*65/2 + (64*64 + 64*65/2) + 64*64 + (2*8*64 + 8*9/2); g1: 0 + 64*64 + (2*64*64 + 64*65/2) + 8*9/2.
  EXPECT_EQ(a.pairs, 2080 + 6176 + 4096 + 1060 + 4096 + 10272 + 36);
  EXPECT_EQ(a.pairs, c.pairs);
  EXPECT_EQ(a.sha256.size(), 64u);
  EXPECT_NE(a.sha256, c.sha256);
}

TEST(SelectFile, RefusalsNameTheFileTheEntryAndWhatIsAllowed) {
  const Problem p = shaped();
  auto error = [&](const std::string& name) {
    try {
      (void)read_select_file(temp_file(name).string(), p);
    } catch (const SelectFileError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::vector<std::int64_t> later = kValues;
  later[3] = 2;  // g0 q1 selects block 2, after itself
  write_text(temp_file("later.txt"), later);
  EXPECT_NE(
      error("later.txt").find("entry [0, 0, 1, 0] = 2: a key block of query block 1 is 0..1 (causal), or -1"),
      std::string::npos)
      << error("later.txt");
  std::vector<std::int64_t> twice = kValues;
  twice[10] = 3;
  write_text(temp_file("twice.txt"), twice);
  EXPECT_NE(error("twice.txt").find("selects block 3 twice"), std::string::npos) << error("twice.txt");
  write_text(temp_file("short.txt"), std::vector<std::int64_t>(kValues.begin(), kValues.end() - 1));
  EXPECT_NE(error("short.txt")
                .find("holds 23 values; this problem's index tensor [B, Hkv, ceil(Sq/l'), n] = "
                      "[1, 2, 4, 3] has 24"),
            std::string::npos)
      << error("short.txt");
  write_npy(temp_file("shape.npy"), {2, 4, 3}, kValues, false);
  EXPECT_NE(error("shape.npy")
                .find("shape [2, 4, 3]; this problem's index tensor is [B, Hkv, ceil(Sq/l'), n] = "
                      "[1, 2, 4, 3]"),
            std::string::npos)
      << error("shape.npy");
  std::ofstream(temp_file("word.txt")) << "0 -1 x";
  EXPECT_NE(error("word.txt").find("value 2 'x' is not an integer"), std::string::npos) << error("word.txt");
  EXPECT_NE(error("missing.txt").find("cannot be read"), std::string::npos);
}

TEST(SelectFile, KernelsSeeTheFileAndAChangedFileIsRefused) {
  Problem p = shaped();
  const fs::path path = temp_file("cached.txt");
  write_text(path, kValues);
  const SelectFileTable t = read_select_file(path.string(), p);
  p.select.file = path.string();
  p.select.file_sha256 = t.sha256;
  p.select.file_pairs = t.pairs;
  EXPECT_EQ(p.validate(), "");
  EXPECT_EQ(selected_block_table(p), t.table);
  EXPECT_EQ(selected_blocks(p, 0, 1, 2), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_TRUE(selected_blocks(p, 0, 1, 0).empty());
  // FLOPs from the file's pairs: 2 x (D + Dv) x (Hq / Hkv) x pairs.
  EXPECT_DOUBLE_EQ(p.forward_flops(), 2.0 * 8 * 2 * static_cast<double>(t.pairs));
  Problem other = p;  // the same path planned with another content: read afresh, found changed
  other.select.file_sha256 = std::string(64, '0');
  try {
    (void)select_file_table(other);
    ADD_FAILURE() << "a changed file was read";
  } catch (const SelectFileError& e) {
    EXPECT_NE(std::string(e.what()).find("changed since the sweep was planned"), std::string::npos)
        << e.what();
  }
  p.select.file_sha256.clear();
  EXPECT_NE(p.validate().find("not read yet"), std::string::npos) << p.validate();
}

TEST(SelectFile, OracleGivesEmptyRowsZeroAndRowsWithoutTheirDiagonalTheirBlocks) {
  Problem p = shaped();
  const fs::path path = temp_file("oracle.txt");
  write_text(path, kValues);
  const SelectFileTable t = read_select_file(path.string(), p);
  p.select.file = path.string();
  p.select.file_sha256 = t.sha256;
  p.select.file_pairs = t.pairs;
  // Q = 0: every visible key weighs the same; V = the key's index, so O is the visible keys' mean.
  std::vector<float> q(static_cast<std::size_t>(p.q_elems()), 0.0f),
      k(static_cast<std::size_t>(p.k_elems()), 1.0f), v(static_cast<std::size_t>(p.v_elems()));
  for (std::int64_t j = 0; j < p.seq_kv; ++j)
    for (std::int64_t g = 0; g < 2; ++g)
      for (std::int64_t d = 0; d < 4; ++d)
        v[static_cast<std::size_t>((j * 2 + g) * 4 + d)] = static_cast<float>(j);
  std::vector<double> o(static_cast<std::size_t>(p.o_elems())), lse(static_cast<std::size_t>(p.lse_elems()));
  cpu_reference_attention(p, q.data(), k.data(), v.data(), 1.0, o.data(), lse.data());
  auto o_at = [&](std::int64_t i, std::int64_t h) { return o[static_cast<std::size_t>((i * 4 + h) * 4)]; };
  auto lse_at = [&](std::int64_t i, std::int64_t h) { return lse[static_cast<std::size_t>(h * 200 + i)]; };
  // KV head 1 (query heads 2, 3), query block 0: nothing selected.
  EXPECT_EQ(o_at(5, 2), 0.0);
  EXPECT_TRUE(std::isinf(lse_at(5, 3)) && lse_at(5, 3) < 0);
  // KV head 0, row 140 (query block 2): block 1 alone, keys 64..127, mean 95.5 over 64 keys.
  EXPECT_NEAR(o_at(140, 0), 95.5, 1e-9);
  EXPECT_NEAR(lse_at(140, 1), std::log(64.0), 1e-12);
  // KV head 1, row 100 (query block 1): block 0 only.
  EXPECT_NEAR(o_at(100, 2), 31.5, 1e-9);
  // The engine's sampled rows: one head's slice (batch 1, one KV head) finds its rows in the full
  // problem's table through the slice's origin.
  Problem one = p;
  one.heads_q = one.heads_kv = 1;
  std::vector<float> v1(static_cast<std::size_t>(one.v_elems()));
  for (std::int64_t j = 0; j < 200; ++j)
    for (std::int64_t d = 0; d < 4; ++d) v1[static_cast<std::size_t>(j * 4 + d)] = static_cast<float>(j);
  const std::vector<RowIndex> rows{{0, 0, 100}, {0, 0, 140}, {0, 0, 5}};
  std::vector<double> o1(rows.size() * 4), lse1(rows.size());
  cpu_reference_rows(one, q.data(), k.data(), v1.data(), 1.0, rows, o1.data(), lse1.data(),
                     SliceOrigin{&p, 0, 1});
  EXPECT_NEAR(o1[0], 31.5, 1e-9);  // KV head 1's rows, as above
  EXPECT_NEAR(o1[4], o_at(140, 2), 1e-9);
  EXPECT_TRUE(std::isinf(lse1[2]) && lse1[2] < 0);
}

}  // namespace
}  // namespace attn
