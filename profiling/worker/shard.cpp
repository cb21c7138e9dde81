// --shard and --devices parsing, and the deterministic plan slice (see shard.hpp).
#include "profiling/worker/shard.hpp"

#include <algorithm>
#include <charconv>

namespace attn {

namespace {

bool parse_int(std::string_view s, int& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

Shard parse_shard(std::string_view text) {
  const std::string shown = "--shard '" + std::string(text) + "': ";
  const auto slash = text.find('/');
  Shard s;
  if (slash == std::string_view::npos || !parse_int(text.substr(0, slash), s.k) ||
      !parse_int(text.substr(slash + 1), s.n))
    throw SpecError(shown + "expected k/n with integers, e.g. 1/4 (the first of 4 shards)");
  if (s.n < 1) throw SpecError(shown + "n must be 1 or more");
  if (s.k < 1 || s.k > s.n)
    throw SpecError(shown + "k counts from 1 to n = " + std::to_string(s.n) + " (shards 1/" +
                    std::to_string(s.n) + " .. " + std::to_string(s.n) + "/" + std::to_string(s.n) + ")");
  return s;
}

std::vector<std::size_t> shard_indices(const std::vector<Case>& plan, const Shard& s) {
  std::vector<std::size_t> mine;
  std::size_t group = 0;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (i > 0 && !(plan[i].problem == plan[i - 1].problem)) ++group;
    if (static_cast<int>(group % static_cast<std::size_t>(s.n)) == s.k - 1) mine.push_back(i);
  }
  return mine;
}

std::vector<int> parse_devices(std::string_view text, int available, const std::string& why_none) {
  const std::string shown = "--devices '" + std::string(text) + "': ";
  std::vector<int> devices;
  if (text == "all") {
    if (available <= 0) throw SpecError(shown + "no device is visible here (" + why_none + ")");
    for (int d = 0; d < available; ++d) devices.push_back(d);
    return devices;
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item =
        text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    int d = -1;
    if (!parse_int(item, d) || d < 0)
      throw SpecError(shown + "'" + std::string(item) +
                      "' is not a device index; expected all or a list like 0,2");
    if (std::find(devices.begin(), devices.end(), d) != devices.end())
      throw SpecError(shown + "device " + std::to_string(d) + " is listed twice");
    devices.push_back(d);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return devices;
}

}  // namespace attn
