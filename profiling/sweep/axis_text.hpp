// Text pieces every sweep-axis parser cuts its input into: blanks trimmed, items split on a
// separator (each trimmed), and the way back: items joined with a separator. Shared by
// axis_parse.cpp, varlen_axis.cpp, the preset writer and the GUI's sweep form.
#pragma once
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

inline std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(trim(s.substr(start)));
      return parts;
    }
    parts.push_back(trim(s.substr(start, pos - start)));
    start = pos + 1;
  }
}

// f(x) of every item of v, separated by sep.
template <class T, class F>
std::string join_map(const std::vector<T>& v, F f, std::string_view sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += sep;
    s += f(v[i]);
  }
  return s;
}

}  // namespace attn
