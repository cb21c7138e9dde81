// A value quoted for an error message: 'value'. Shared by the sweep parsers.
#pragma once
#include <string>
#include <string_view>

namespace attn {

// Appends rather than `"'" + s + "'"`: GCC 12 at -O3 flags the latter with a false -Wrestrict.
inline std::string quoted(std::string_view s) {
  std::string r;
  r.reserve(s.size() + 2);
  r += '\'';
  r += s;
  r += '\'';
  return r;
}

}  // namespace attn
