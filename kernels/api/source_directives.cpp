// Kernel-source directives (source_directives.hpp).
#include "kernels/api/source_directives.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

namespace attn {

namespace {

constexpr std::string_view kTag = "// @attnscope ";
constexpr const char* kKeys = "id, description, entry, writes_lse, stated_rel_l2, knob, option, include_dir";

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool valid_identifier(std::string_view s) {
  return !s.empty() && !std::isdigit(static_cast<unsigned char>(s.front())) &&
         std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

int parse_int(std::string_view s, const std::string& where) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    throw SourceDirectiveError(where + ": '" + std::string(s) + "' is not an integer");
  return v;
}

// `NAME values=1,2,3 default=2 help=free text to the end of the line`
KnobSpec parse_knob(std::string_view value, const std::string& where) {
  KnobSpec k;
  const std::size_t sp = value.find(' ');
  k.name = std::string(value.substr(0, sp));
  if (!valid_identifier(k.name))
    throw SourceDirectiveError(where + ": knob name '" + k.name +
                               "': expected an identifier (letters, digits, '_'), then values=A,B,...");
  std::string_view rest = sp == std::string_view::npos ? std::string_view() : trim(value.substr(sp));
  bool has_default = false;
  while (!rest.empty()) {
    if (rest.substr(0, 5) == "help=") {
      k.help = std::string(trim(rest.substr(5)));
      break;
    }
    const std::size_t end = std::min(rest.find(' '), rest.size());
    const std::string_view field = rest.substr(0, end);
    rest = trim(rest.substr(end));
    if (field.substr(0, 7) == "values=") {
      std::string_view list = field.substr(7);
      while (!list.empty()) {
        const std::size_t comma = std::min(list.find(','), list.size());
        k.values.push_back(parse_int(list.substr(0, comma), where + ": knob " + k.name + " values"));
        list = comma < list.size() ? list.substr(comma + 1) : std::string_view();
      }
    } else if (field.substr(0, 8) == "default=") {
      k.default_value = parse_int(field.substr(8), where + ": knob " + k.name + " default");
      has_default = true;
    } else {
      throw SourceDirectiveError(where + ": knob " + k.name + ": unknown field '" + std::string(field) +
                                 "'; expected values=A,B,... default=V help=text");
    }
  }
  if (k.values.empty())
    throw SourceDirectiveError(where + ": knob " + k.name + ": expected values=A,B,... (at least one value)");
  if (!has_default) k.default_value = k.values.front();
  if (std::find(k.values.begin(), k.values.end(), k.default_value) == k.values.end())
    throw SourceDirectiveError(where + ": knob " + k.name + ": default=" + std::to_string(k.default_value) +
                               " is not one of its values");
  return k;
}

}  // namespace

SourceDirectives parse_source_directives(std::string_view text, const std::string& path) {
  SourceDirectives d;
  int line_no = 0;
  int id_line = 0;
  while (!text.empty()) {
    ++line_no;
    const std::size_t nl = std::min(text.find('\n'), text.size());
    const std::string_view line = trim(text.substr(0, nl));
    text = nl < text.size() ? text.substr(nl + 1) : std::string_view();
    if (line.substr(0, kTag.size()) != kTag) continue;
    const std::string where = path + ":" + std::to_string(line_no);
    const std::string_view body = trim(line.substr(kTag.size()));
    const std::size_t colon = body.find(':');
    const std::string_view key = trim(body.substr(0, colon));
    const std::string_view value =
        colon == std::string_view::npos ? std::string_view() : trim(body.substr(colon + 1));
    auto need_value = [&] {
      if (value.empty())
        throw SourceDirectiveError(where + ": '@attnscope " + std::string(key) + ":' has no value");
    };
    if (key == "id") {
      need_value();
      d.id = std::string(value);
      id_line = line_no;
    } else if (key == "description") {
      need_value();
      d.description = std::string(value);
    } else if (key == "entry") {
      need_value();
      if (!valid_identifier(value))
        throw SourceDirectiveError(where + ": entry '" + std::string(value) +
                                   "': expected the name of an extern \"C\" __global__ function");
      d.entry = std::string(value);
    } else if (key == "writes_lse") {
      d.writes_lse = true;
    } else if (key == "stated_rel_l2") {
      need_value();
      char* end = nullptr;
      const std::string v(value);
      d.stated_rel_l2 = std::strtod(v.c_str(), &end);
      if (end != v.c_str() + v.size() || !(d.stated_rel_l2 > 0))
        throw SourceDirectiveError(where + ": stated_rel_l2 '" + v + "': expected a positive number (2e-3)");
    } else if (key == "knob") {
      need_value();
      KnobSpec k = parse_knob(value, where);
      for (const KnobSpec& other : d.knobs)
        if (other.name == k.name)
          throw SourceDirectiveError(where + ": knob " + k.name + " is declared twice");
      d.knobs.push_back(std::move(k));
    } else if (key == "option") {
      need_value();
      d.options.emplace_back(value);
    } else if (key == "include_dir") {
      need_value();
      d.include_dirs.emplace_back(value);
    } else {
      throw SourceDirectiveError(where + ": unknown directive '@attnscope " + std::string(key) +
                                 "'; expected one of " + kKeys);
    }
  }
  if (d.id.empty())
    throw SourceDirectiveError(
        path + ": no '// @attnscope id: family.variant' line; a kernel source names its kernel");
  if (d.description.empty())
    throw SourceDirectiveError(
        path + ":" + std::to_string(id_line) +
        ": no '// @attnscope description: ...' line; expected one line saying what the kernel is");
  return d;
}

}  // namespace attn
