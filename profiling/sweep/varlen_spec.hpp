// How a varlen sweep point draws its sequence lengths (the syntax and the draw: varlen_axis.hpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn {

struct VarLenSpec {
  enum class Kind { none, uniform, lognormal, list, file };
  Kind kind = Kind::none;
  std::int64_t low = 1;               // uniform
  double mean = 0;                    // lognormal [tokens]
  double sigma = 0;                   // lognormal
  std::vector<std::int64_t> lengths;  // list
  std::string file;                   // file: as given
  std::optional<std::uint64_t> seed;  // @SEED
  bool active() const { return kind != Kind::none; }
  friend bool operator==(const VarLenSpec&, const VarLenSpec&) = default;
};

}  // namespace attn
