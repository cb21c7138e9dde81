// Parsers and formatters for the sweep axis syntax (see axis_parse.hpp and docs/presets.md).
#include "profiling/sweep/axis_parse.hpp"

#include <cctype>
#include <charconv>
#include <limits>

#include "profiling/sweep/axis_text.hpp"
#include "profiling/sweep/quoted.hpp"

namespace attn {

const char* const kIntAxisAllowed =
    "a list like 64,128 or a range like 320:1024:64 (start:stop:step, stop inclusive) or "
    "512:16384:x2 (geometric), values >= 1";
const char* const kDTypeAxisAllowed = "a list of fp16, bf16, fp32 like fp16,bf16";
const char* const kBoolAxisAllowed = "a list of 0, 1 (or true, false) like 0,1";
const char* const kPassAxisAllowed = "a list of fwd, bwd and fwd+bwd, e.g. fwd,bwd";
const char* const kWindowAxisAllowed =
    "windows L,R separated by ';' like 64,0;128,128 (L or R = -1: unbounded on that side; a single "
    "L means L,0), or none";
const char* const kSelectAxisAllowed =
    "selected branches l',n[,seed] (block length, blocks per query block, both >= 1; seed >= 0, default 0) "
    "or l',n,file:PATH (the index tensor from a .npy or text file) separated by ';' like 64,16;64,16,7, or "
    "none";
const char* const kCompressAxisAllowed =
    "compressed branches l,d (block length, stride, both >= 1) separated by ';' like 32,16;64,32, or none";

namespace {

bool to_int(std::string_view s, std::int64_t& v) {
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// Digits that overflow int64: "is too large" says more than "is not an integer".
bool overflows(std::string_view s) {
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) s.remove_prefix(1);
  if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos) return false;
  std::int64_t v = 0;
  return std::from_chars(s.data(), s.data() + s.size(), v).ec == std::errc::result_out_of_range;
}

std::string not_an_integer(std::string_view item) {
  return quoted(item) +
         (overflows(item) ? " is too large (at most 9223372036854775807)" : " is not an integer");
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

bool fail(AxisProblem& problem, std::string what, const char* allowed) {
  problem.what = std::move(what);
  problem.allowed = allowed;
  return false;
}

bool push_checked(std::vector<std::int64_t>& out, std::int64_t v, AxisProblem& problem) {
  if (out.size() >= kMaxAxisValues)
    return fail(problem, "expands to more than " + std::to_string(kMaxAxisValues) + " values",
                kIntAxisAllowed);
  out.push_back(v);
  return true;
}

bool parse_range(std::string_view item, std::vector<std::int64_t>& out, AxisProblem& problem) {
  const auto parts = split(item, ':');
  if (parts.size() != 3)
    return fail(problem, quoted(item) + " is not a range: a range has three parts start:stop:step",
                kIntAxisAllowed);
  std::int64_t start = 0, stop = 0;
  if (!to_int(parts[0], start))
    return fail(problem, "range " + quoted(item) + ": start " + not_an_integer(parts[0]), kIntAxisAllowed);
  if (!to_int(parts[1], stop))
    return fail(problem, "range " + quoted(item) + ": stop " + not_an_integer(parts[1]), kIntAxisAllowed);
  if (start < 1) return fail(problem, "range " + quoted(item) + ": start must be >= 1", kIntAxisAllowed);
  if (stop < start)
    return fail(problem,
                "range " + quoted(item) + ": stop " + std::to_string(stop) + " is below start " +
                    std::to_string(start),
                kIntAxisAllowed);
  std::string_view step_text = parts[2];
  const bool geometric = !step_text.empty() && (step_text.front() == 'x' || step_text.front() == 'X');
  if (geometric) step_text.remove_prefix(1);
  std::int64_t step = 0;
  if (!to_int(step_text, step))
    return fail(problem, "range " + quoted(item) + ": step " + quoted(parts[2]) + " is not an integer or xK",
                kIntAxisAllowed);
  if (geometric) {
    if (step < 2)
      return fail(problem, "range " + quoted(item) + ": factor x" + std::to_string(step) + " must be >= 2",
                  kIntAxisAllowed);
    for (std::int64_t v = start;; v *= step) {
      if (!push_checked(out, v, problem)) return false;
      if (v > stop / step) break;  // next value would pass stop (or overflow)
    }
    return true;
  }
  if (step < 1)
    return fail(problem, "range " + quoted(item) + ": step " + std::to_string(step) + " must be >= 1",
                kIntAxisAllowed);
  if ((stop - start) / step >= static_cast<std::int64_t>(kMaxAxisValues))
    return fail(
        problem,
        "range " + quoted(item) + " expands to more than " + std::to_string(kMaxAxisValues) + " values",
        kIntAxisAllowed);
  for (std::int64_t v = start;; v += step) {
    if (!push_checked(out, v, problem)) return false;
    if (v > stop - step) break;
  }
  return true;
}

}  // namespace

std::string format_field_error(std::string_view field, std::string_view value, const AxisProblem& p) {
  if (field.starts_with("--"))
    return std::string(field) + " " + quoted(value) + ": " + p.what + "; expected " + p.allowed;
  return "field " + quoted(field) + " = " + quoted(value) + ": " + p.what + "; allowed: " + p.allowed;
}

bool try_parse_int_axis(std::string_view text, std::vector<std::int64_t>& out, AxisProblem& problem) {
  out.clear();
  if (trim(text).empty()) return fail(problem, "no values", kIntAxisAllowed);
  for (std::string_view item : split(text, ',')) {
    if (item.empty()) return fail(problem, "empty item in the list", kIntAxisAllowed);
    if (item.find(':') != std::string_view::npos) {
      if (!parse_range(item, out, problem)) return false;
      continue;
    }
    std::int64_t v = 0;
    if (!to_int(item, v)) return fail(problem, not_an_integer(item), kIntAxisAllowed);
    if (v < 1) return fail(problem, std::to_string(v) + " is below 1", kIntAxisAllowed);
    if (!push_checked(out, v, problem)) return false;
  }
  return true;
}

bool try_parse_dtype_axis(std::string_view text, std::vector<DType>& out, AxisProblem& problem) {
  out.clear();
  if (trim(text).empty()) return fail(problem, "no values", kDTypeAxisAllowed);
  for (std::string_view item : split(text, ',')) {
    if (item.empty()) return fail(problem, "empty item in the list", kDTypeAxisAllowed);
    const auto d = parse_dtype(lower(item));
    if (!d) return fail(problem, quoted(item) + " is not a dtype", kDTypeAxisAllowed);
    out.push_back(*d);
  }
  return true;
}

bool try_parse_pass_axis(std::string_view text, std::vector<Pass>& out, AxisProblem& problem) {
  out.clear();
  if (trim(text).empty()) return fail(problem, "no values", kPassAxisAllowed);
  for (std::string_view item : split(text, ',')) {
    if (item.empty()) return fail(problem, "empty item in the list", kPassAxisAllowed);
    const auto pass = parse_pass(lower(item));
    if (!pass) return fail(problem, quoted(item) + " is not a pass", kPassAxisAllowed);
    out.push_back(*pass);
  }
  return true;
}

bool try_parse_bool_axis(std::string_view text, std::vector<int>& out, AxisProblem& problem) {
  out.clear();
  if (trim(text).empty()) return fail(problem, "no values", kBoolAxisAllowed);
  for (std::string_view item : split(text, ',')) {
    if (item.empty()) return fail(problem, "empty item in the list", kBoolAxisAllowed);
    const std::string l = lower(item);
    // Only the spellings kBoolAxisAllowed names: `--causal yes` would read as a typo for a list.
    if (l == "1" || l == "true") {
      out.push_back(1);
    } else if (l == "0" || l == "false") {
      out.push_back(0);
    } else {
      return fail(problem, quoted(item) + " is not 0 or 1", kBoolAxisAllowed);
    }
  }
  return true;
}

bool try_parse_window(std::string_view text, Window& out, AxisProblem& problem) {
  text = trim(text);
  if (text.empty()) return fail(problem, "empty window", kWindowAxisAllowed);
  if (lower(text) == "none") {
    out = Window{};
    return true;
  }
  const auto sides = split(text, ',');
  if (sides.size() > 2)
    return fail(problem,
                "window " + quoted(text) + " has " + std::to_string(sides.size()) + " numbers, not 1 or 2",
                kWindowAxisAllowed);
  std::int64_t side[2] = {0, 0};  // a single L means (L, 0)
  for (std::size_t i = 0; i < sides.size(); ++i) {
    if (!to_int(sides[i], side[i]))
      return fail(problem, "window " + quoted(text) + ": " + quoted(sides[i]) + " is not an integer",
                  kWindowAxisAllowed);
    if (side[i] < -1)
      return fail(problem, "window " + quoted(text) + ": " + std::to_string(side[i]) + " is below -1",
                  kWindowAxisAllowed);
  }
  if (sides.size() == 1 && side[0] == -1) side[1] = -1;  // "-1" alone reads as no window
  out = Window{side[0], side[1]};
  return true;
}

bool try_parse_window_axis(std::string_view text, std::vector<Window>& out, AxisProblem& problem) {
  return try_parse_semicolon_list(text, out, problem, kWindowAxisAllowed, "windows", try_parse_window);
}

bool try_parse_compress(std::string_view text, Compress& out, AxisProblem& problem) {
  text = trim(text);
  if (text.empty()) return fail(problem, "empty compressed branch", kCompressAxisAllowed);
  if (lower(text) == "none") {
    out = Compress{};
    return true;
  }
  const auto parts = split(text, ',');
  if (parts.size() != 2)
    return fail(problem,
                "compressed branch " + quoted(text) + " has " + std::to_string(parts.size()) +
                    " numbers, not 2 (l,d)",
                kCompressAxisAllowed);
  std::int64_t v[2] = {0, 0};
  for (std::size_t i = 0; i < 2; ++i) {
    if (!to_int(parts[i], v[i]))
      return fail(problem,
                  "compressed branch " + quoted(text) + ": " + quoted(parts[i]) + " is not an integer",
                  kCompressAxisAllowed);
    if (v[i] < 1)
      return fail(problem,
                  "compressed branch " + quoted(text) + ": " + (i == 0 ? "block l = " : "stride d = ") +
                      std::to_string(v[i]) + " is below 1",
                  kCompressAxisAllowed);
  }
  out = Compress{v[0], v[1]};
  return true;
}

bool try_parse_compress_axis(std::string_view text, std::vector<Compress>& out, AxisProblem& problem) {
  return try_parse_semicolon_list(text, out, problem, kCompressAxisAllowed, "compressed branches",
                                  try_parse_compress);
}

bool try_parse_select(std::string_view text, Select& out, AxisProblem& problem) {
  text = trim(text);
  if (text.empty()) return fail(problem, "empty selected branch", kSelectAxisAllowed);
  if (lower(text) == "none") {
    out = Select{};
    return true;
  }
  auto parts = split(text, ',');
  std::string file;  // l',n,file:PATH: the path may hold ',' itself
  if (parts.size() >= 3 && trim(parts[2]).substr(0, 5) == "file:") {
    const std::size_t at = text.find("file:");
    file = std::string(trim(text.substr(at + 5)));
    if (file.empty())
      return fail(problem, "selected branch " + quoted(text) + ": file: needs a path", kSelectAxisAllowed);
    parts.resize(2);
  }
  if (parts.size() != 2 && parts.size() != 3)
    return fail(problem,
                "selected branch " + quoted(text) + " has " + std::to_string(parts.size()) +
                    " numbers, not 2 or 3 (l',n[,seed])",
                kSelectAxisAllowed);
  std::int64_t v[3] = {0, 0, 0};
  static constexpr const char* kNames[] = {"block l' = ", "count n = ", "seed = "};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (!to_int(parts[i], v[i]))
      return fail(problem, "selected branch " + quoted(text) + ": " + quoted(parts[i]) + " is not an integer",
                  kSelectAxisAllowed);
    if (v[i] < (i == 2 ? 0 : 1))
      return fail(problem,
                  "selected branch " + quoted(text) + ": " + kNames[i] + std::to_string(v[i]) + " is below " +
                      (i == 2 ? "0" : "1"),
                  kSelectAxisAllowed);
  }
  out = Select{};
  out.block = v[0];
  out.count = v[1];
  out.seed = static_cast<std::uint64_t>(v[2]);
  out.file = std::move(file);
  return true;
}

bool try_parse_select_axis(std::string_view text, std::vector<Select>& out, AxisProblem& problem) {
  return try_parse_semicolon_list(text, out, problem, kSelectAxisAllowed, "selected branches",
                                  try_parse_select);
}

std::vector<std::int64_t> parse_int_axis(std::string_view text, std::string_view field) {
  std::vector<std::int64_t> out;
  AxisProblem p;
  if (!try_parse_int_axis(text, out, p)) throw SpecError(format_field_error(field, text, p));
  return out;
}

std::vector<DType> parse_dtype_axis(std::string_view text, std::string_view field) {
  std::vector<DType> out;
  AxisProblem p;
  if (!try_parse_dtype_axis(text, out, p)) throw SpecError(format_field_error(field, text, p));
  return out;
}

std::vector<Pass> parse_pass_axis(std::string_view text, std::string_view field) {
  std::vector<Pass> out;
  AxisProblem p;
  if (!try_parse_pass_axis(text, out, p)) throw SpecError(format_field_error(field, text, p));
  return out;
}

std::vector<int> parse_bool_axis(std::string_view text, std::string_view field) {
  std::vector<int> out;
  AxisProblem p;
  if (!try_parse_bool_axis(text, out, p)) throw SpecError(format_field_error(field, text, p));
  return out;
}

std::vector<Window> parse_window_axis(std::string_view text, std::string_view field) {
  std::vector<Window> out;
  AxisProblem p;
  if (!try_parse_window_axis(text, out, p)) throw SpecError(format_field_error(field, text, p));
  return out;
}

std::vector<Compress> parse_compress_axis(std::string_view text, std::string_view field) {
  std::vector<Compress> out;
  AxisProblem p;
  if (!try_parse_compress_axis(text, out, p)) throw SpecError(format_field_error(field, text, p));
  return out;
}

std::vector<Select> parse_select_axis(std::string_view text, std::string_view field) {
  std::vector<Select> out;
  AxisProblem p;
  if (!try_parse_select_axis(text, out, p)) throw SpecError(format_field_error(field, text, p));
  return out;
}

std::int64_t parse_int_value(std::string_view text, std::string_view field, std::int64_t min_value) {
  std::int64_t v = 0;
  const std::string allowed = "an integer >= " + std::to_string(min_value);
  if (!to_int(trim(text), v))
    throw SpecError(format_field_error(field, text, {quoted(trim(text)) + " is not an integer", allowed}));
  if (v < min_value)
    throw SpecError(format_field_error(
        field, text, {std::to_string(v) + " is below " + std::to_string(min_value), allowed}));
  return v;
}

bool parse_bool_value(std::string_view text, std::string_view field) {
  const auto v = parse_bool_axis(text, field);
  if (v.size() != 1)
    throw SpecError(
        format_field_error(field, text, {"expects one value, got " + std::to_string(v.size()), "0 or 1"}));
  return v.front() != 0;
}

std::string format_int_axis(const std::vector<std::int64_t>& v) {
  return join_map(
      v, [](std::int64_t x) { return std::to_string(x); }, ",");
}

std::string format_dtype_axis(const std::vector<DType>& v) {
  return join_map(
      v, [](DType t) { return std::string(to_string(t)); }, ",");
}

std::string format_pass_axis(const std::vector<Pass>& v) {
  return join_map(
      v, [](Pass p) { return std::string(to_string(p)); }, ",");
}

std::string format_bool_axis(const std::vector<int>& v) {
  return join_map(
      v, [](int x) { return std::string(x != 0 ? "1" : "0"); }, ",");
}

std::string format_window_axis(const std::vector<Window>& v) {
  return join_map(
      v,
      [](const Window& w) {
        return w.active() ? std::to_string(w.left) + "," + std::to_string(w.right) : "none";
      },
      ";");
}

std::string format_compress_axis(const std::vector<Compress>& v) {
  return join_map(
      v,
      [](const Compress& c) {
        return c.active() ? std::to_string(c.block) + "," + std::to_string(c.stride) : "none";
      },
      ";");
}

std::string select_text(const Select& v) {
  if (!v.active()) return "none";
  std::string s = std::to_string(v.block) + "," + std::to_string(v.count);
  if (v.from_file()) {
    s += ",file:";
    s += v.file;
  } else if (v.seed != 0) {
    s += ',';
    s += std::to_string(v.seed);
  }
  return s;
}

std::string format_select_axis(const std::vector<Select>& v) { return join_map(v, select_text, ";"); }

}  // namespace attn
