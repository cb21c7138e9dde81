// `--size WxH`, the one image-size flag of every command that writes images (plot, report, gui).
#pragma once
#include <stdexcept>
#include <string>
#include <utility>

namespace attn::cli {

inline constexpr int kMinImageSide = 64, kMaxImageSide = 8192;  // [px]

// "800x500" -> {800, 500}; throws std::invalid_argument naming --size, the value and what is
// allowed.
std::pair<int, int> parse_image_size(const std::string& s);

}  // namespace attn::cli
