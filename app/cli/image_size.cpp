// parse_image_size(): WxH with both sides whole numbers in range.
#include "app/cli/image_size.hpp"

#include <fmt/format.h>

namespace attn::cli {

std::pair<int, int> parse_image_size(const std::string& s) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(
        fmt::format("--size {}: {}; expected WxH with each side in {}..{} px, e.g. 800x500", s, why,
                    kMinImageSide, kMaxImageSide));
  };
  const auto x = s.find_first_of("xX");
  if (x == std::string::npos) throw bad("no 'x' between width and height");
  int wh[2] = {0, 0};
  const std::string parts[2] = {s.substr(0, x), s.substr(x + 1)};
  for (int i = 0; i < 2; ++i) {
    if (parts[i].empty() || parts[i].find_first_not_of("0123456789") != std::string::npos ||
        parts[i].size() > 6)
      throw bad("'" + parts[i] + "' is not a whole number");
    wh[i] = std::stoi(parts[i]);
    if (wh[i] < kMinImageSide || wh[i] > kMaxImageSide) throw bad(fmt::format("{} is out of range", wh[i]));
  }
  return {wh[0], wh[1]};
}

}  // namespace attn::cli
