// strip_type_tags(): the token rewrite behind HelpFormatter.
#include "app/cli/help_formatter.hpp"

#include <array>
#include <cctype>
#include <string_view>

namespace attn::cli {

namespace {

// CLI11's names for built-in value types (detail::type_name and its validators' descriptions).
constexpr std::array<std::string_view, 9> kTags{"TEXT", "INT",    "UINT",     "FLOAT",      "BOOLEAN",
                                                "ENUM", "NUMBER", "POSITIVE", "NONNEGATIVE"};

bool is_tag(std::string_view w) {
  for (std::string_view t : kTags)
    if (w == t) return true;
  return false;
}

}  // namespace

std::string strip_type_tags(const std::string& opts) {
  std::string out;
  std::size_t i = 0;
  while (i < opts.size()) {
    // A word: letters only, bounded by the start, a space, ':' or '=' on the left.
    const bool at_word = (i == 0 || opts[i - 1] == ' ' || opts[i - 1] == ':') &&
                         std::isupper(static_cast<unsigned char>(opts[i]));
    if (at_word) {
      std::size_t j = i;
      while (j < opts.size() && std::isupper(static_cast<unsigned char>(opts[j]))) ++j;
      const std::string_view w(opts.data() + i, j - i);
      const bool bounded = j == opts.size() || opts[j] == ' ' || opts[j] == ':' || opts[j] == '=';
      if (bounded && is_tag(w)) {
        if (j < opts.size() && opts[j] == ':')
          ++j;  // "TEXT:" before a validator
        else if (j + 3 < opts.size() && opts.compare(j, 4, " in ") == 0)
          j += 4;  // "INT in [1 - 9]"
        else if (j < opts.size() && opts[j] == ' ')
          ++j;  // "TEXT REQUIRED"
        if (!out.empty() && out.back() == ' ' && j < opts.size() && opts[j] == '=') out.pop_back();
        i = j;
        continue;
      }
      out.append(opts, i, j - i);
      i = j;
      continue;
    }
    out.push_back(opts[i++]);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out == " ") out.clear();
  return out;
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  return strip_type_tags(CLI::Formatter::make_option_opts(opt));
}

}  // namespace attn::cli
