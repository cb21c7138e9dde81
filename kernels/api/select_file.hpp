// NSA's selected branch with its index tensor read from a file (Problem::Select::file): a NumPy
// .npy array (int32 or int64, C order, shape [B, Hkv, ceil(Sq / l'), n]) or, any other name, a text
// file of whitespace-separated integers in the same order. -1 pads a row; rows are normalised to
// ascending order with the padding last. A block outside 0..q (q: the row's query block: a later one
// is never visible) or a block twice in a row is an error. Any causal blocks are allowed, so a row may
// lack its diagonal block or see no key at all (O = 0, LSE = -inf).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/api/problem.hpp"

namespace attn {

class SelectFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SelectFileTable {
  std::vector<std::int32_t> table;  // normalised, [B, Hkv, ceil(Sq / l'), n]
  std::string sha256;               // of the file's bytes
  std::int64_t pairs = 0;           // visible (query, key) pairs over all batches and KV heads
};

// Reads and checks `path` against p's shape (batch, heads_kv, seq_q and select's l' and n); throws
// SelectFileError naming the file, the entry and what is allowed.
SelectFileTable read_select_file(const std::string& path, const Problem& p);

// The normalised table of p, whose select.file planning read (select.file_sha256 set): read once per
// process and kept. Throws SelectFileError when the file's bytes no longer have the planned sha256.
const std::vector<std::int32_t>& select_file_table(const Problem& p);

}  // namespace attn
