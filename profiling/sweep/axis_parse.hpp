// Text syntax of sweep axes, shared by presets, CLI flags and the GUI: integer lists and ranges,
// dtype lists, 0/1 lists and attention windows. Errors throw SpecError naming the field.
#pragma once
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/api/dtype.hpp"
#include "kernels/api/problem.hpp"
#include "profiling/sweep/sweep_spec.hpp"

namespace attn {

// An axis expands to at most this many values: a typo such as 1:1000000:1 fails fast instead of
// planning a million cases.
inline constexpr std::size_t kMaxAxisValues = 4096;

// What a parser found wrong, before it knows which field or flag it was reading.
struct AxisProblem {
  std::string what;     // "'abc' is not an integer"
  std::string allowed;  // "a list like 64,128 or a range like 320:1024:64"
};

// The user-facing message for a bad value. A field starting with "--" is a flag:
//   --head-dim '64,abc': 'abc' is not an integer; expected a list like 64,128 or ...
// otherwise a preset field:
//   field 'sweep.head_dim' = '64,abc': 'abc' is not an integer; allowed: a list like 64,128 or ...
std::string format_field_error(std::string_view field, std::string_view value, const AxisProblem& p);

// Comma-separated items, each an integer `64`, a range `start:stop:step` (stop inclusive when it
// lies on the grid: 320:1024:64 = 320,384,...,1024) or a geometric range `start:stop:xK`
// (512:16384:x2 = 512,1024,...,16384). Mixtures are fine: `64,128,320:1024:64`. Every value must
// be >= 1 (all sweep axes are sizes). Order is kept; repeats are kept (planning drops duplicates).
std::vector<std::int64_t> parse_int_axis(std::string_view text, std::string_view field);

// `fp16,bf16,fp32` (aliases: half, float16, bfloat16, float, float32).
std::vector<DType> parse_dtype_axis(std::string_view text, std::string_view field);

// `fwd,bwd,fwd+bwd` (aliases: forward, backward, both).
std::vector<Pass> parse_pass_axis(std::string_view text, std::string_view field);

// `0,1` or `true,false` (any case; nothing else: `yes` is refused, naming what is allowed); returns 0/1.
std::vector<int> parse_bool_axis(std::string_view text, std::string_view field);

// One window `L,R` (keys visible to the left/right of the diagonal, -1 = unbounded on that side);
// several separated by ';' (`64,0;128,128`); `none` or `-1,-1` = no window. A single number `L`
// means (L, 0): a causal sliding window of L keys back, the Mistral/NSA convention.
std::vector<Window> parse_window_axis(std::string_view text, std::string_view field);

// NSA's compressed branch `l,d` (block length l, stride d, both >= 1); several separated by ';'
// (`32,16;64,32`); `none` = no compressed branch.
std::vector<Compress> parse_compress_axis(std::string_view text, std::string_view field);

// NSA's selected branch `l',n[,seed]` (block length l', blocks per query block n, both >= 1; the
// draw's seed, default 0); several separated by ';'; `none` = no selected branch.
std::vector<Select> parse_select_axis(std::string_view text, std::string_view field);

// A single integer >= min_value, or a boolean, with the same error format (--tokens, --force ...).
std::int64_t parse_int_value(std::string_view text, std::string_view field, std::int64_t min_value);
bool parse_bool_value(std::string_view text, std::string_view field);

// Non-throwing cores: fill `out` and return true, or fill `problem` and return false. For callers
// that add their own context (the preset loader prefixes file:line:col).
bool try_parse_int_axis(std::string_view text, std::vector<std::int64_t>& out, AxisProblem& problem);
bool try_parse_dtype_axis(std::string_view text, std::vector<DType>& out, AxisProblem& problem);
bool try_parse_bool_axis(std::string_view text, std::vector<int>& out, AxisProblem& problem);
bool try_parse_pass_axis(std::string_view text, std::vector<Pass>& out, AxisProblem& problem);
bool try_parse_window_axis(std::string_view text, std::vector<Window>& out, AxisProblem& problem);
bool try_parse_window(std::string_view text, Window& out, AxisProblem& problem);
bool try_parse_compress_axis(std::string_view text, std::vector<Compress>& out, AxisProblem& problem);
bool try_parse_compress(std::string_view text, Compress& out, AxisProblem& problem);
bool try_parse_select_axis(std::string_view text, std::vector<Select>& out, AxisProblem& problem);
bool try_parse_select(std::string_view text, Select& out, AxisProblem& problem);

// Items separated by ';', each parsed by `parse_one(item, value, problem)`: the list axes (windows,
// compressed branches, varlen kinds). `plural` names the items in the too-many message.
template <class T, class ParseOne>
bool try_parse_semicolon_list(std::string_view text, std::vector<T>& out, AxisProblem& problem,
                              const char* allowed, const char* plural, ParseOne parse_one);

// The `allowed` texts, so other messages quote the same syntax.
extern const char* const kIntAxisAllowed;
extern const char* const kDTypeAxisAllowed;
extern const char* const kBoolAxisAllowed;
extern const char* const kPassAxisAllowed;
extern const char* const kWindowAxisAllowed;
extern const char* const kCompressAxisAllowed;
extern const char* const kSelectAxisAllowed;

// "64,128,320" / "fp16,bf16" / "0,1" / "64,0;128,128" / "none": the canonical text of an axis,
// which parses back to the same values (used by the GUI and in messages).
std::string format_int_axis(const std::vector<std::int64_t>& v);
std::string format_dtype_axis(const std::vector<DType>& v);
std::string format_bool_axis(const std::vector<int>& v);
std::string format_pass_axis(const std::vector<Pass>& v);
std::string format_window_axis(const std::vector<Window>& v);
std::string format_compress_axis(const std::vector<Compress>& v);  // "32,16;64,32" / "none"
std::string format_select_axis(const std::vector<Select>& v);      // "64,16;64,16,7" / "none"
std::string select_text(const Select& v);                          // one of them: "64,16,7" / "none"

template <class T, class ParseOne>
bool try_parse_semicolon_list(std::string_view text, std::vector<T>& out, AxisProblem& problem,
                              const char* allowed, const char* plural, ParseOne parse_one) {
  out.clear();
  std::size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
  if (start == text.size()) {
    problem = {"no values", allowed};
    return false;
  }
  for (std::size_t from = 0;;) {
    const std::size_t end = text.find(';', from);
    T value{};
    if (!parse_one(text.substr(from, end == std::string_view::npos ? std::string_view::npos : end - from),
                   value, problem))
      return false;
    if (out.size() >= kMaxAxisValues) {
      problem = {"more than " + std::to_string(kMaxAxisValues) + " " + plural, allowed};
      return false;
    }
    out.push_back(std::move(value));
    if (end == std::string_view::npos) return true;
    from = end + 1;
  }
}

}  // namespace attn
