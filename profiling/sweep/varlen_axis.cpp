// Parsing and drawing of the varlen axis (see varlen_axis.hpp).
#include "profiling/sweep/varlen_axis.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "profiling/sweep/axis_text.hpp"
#include "profiling/sweep/quoted.hpp"

namespace attn {

const char* const kVarLenAxisAllowed =
    "none, uniform[:LO], lognormal:MEAN:SIGMA, list:L1,L2,... or file:PATH, each optionally ending in @SEED, "
    "several separated by ';' (lengths are drawn up to the group's seq)";

namespace {

bool fail(AxisProblem& problem, std::string what) {
  problem = {std::move(what), kVarLenAxisAllowed};
  return false;
}

template <class T>
bool number(std::string_view s, T& v) {
  s = trim(s);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size();
}

// splitmix64: the draw's only source of randomness, the same on every platform.
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::int64_t below(std::int64_t n) {
    return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n));
  }
};

}  // namespace

bool try_parse_varlen(std::string_view text, VarLenSpec& out, AxisProblem& problem) {
  text = trim(text);
  out = VarLenSpec{};
  if (text.empty()) return fail(problem, "empty varlen item");
  if (const std::size_t at = text.rfind('@'); at != std::string_view::npos) {
    std::uint64_t seed = 0;
    if (!number(text.substr(at + 1), seed))
      return fail(problem, "varlen " + quoted(text) + ": seed " + quoted(text.substr(at + 1)) +
                               " is not a non-negative integer");
    out.seed = seed;
    text = trim(text.substr(0, at));
  }
  const std::size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  const std::string_view rest = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  if (kind == "none" && colon == std::string_view::npos)
    return !out.seed || fail(problem, "none takes no seed");
  if (kind == "uniform") {
    out.kind = VarLenSpec::Kind::uniform;
    if (colon != std::string_view::npos && (!number(rest, out.low) || out.low < 1))
      return fail(problem, "varlen " + quoted(text) + ": LO must be an integer >= 1");
    return true;
  }
  if (kind == "lognormal") {
    out.kind = VarLenSpec::Kind::lognormal;
    const auto parts = split(rest, ':');
    if (parts.size() != 2 || !number(parts[0], out.mean) || !number(parts[1], out.sigma) ||
        !(out.mean >= 1) || !(out.sigma >= 0) || !std::isfinite(out.mean) || !std::isfinite(out.sigma))
      return fail(problem,
                  "varlen " + quoted(text) + ": expected lognormal:MEAN:SIGMA with MEAN >= 1 and SIGMA >= 0");
    return true;
  }
  if (kind == "list") {
    out.kind = VarLenSpec::Kind::list;
    for (std::string_view item : split(rest, ',')) {
      std::int64_t v = 0;
      if (!number(item, v) || v < 1)
        return fail(problem, "varlen " + quoted(text) + ": " + quoted(trim(item)) + " is not a length >= 1");
      out.lengths.push_back(v);
    }
    return true;
  }
  if (kind == "file") {
    out.kind = VarLenSpec::Kind::file;
    out.file = std::string(trim(rest));
    if (out.file.empty()) return fail(problem, "varlen " + quoted(text) + ": file: needs a path");
    return true;
  }
  return fail(problem, "varlen " + quoted(text) + ": unknown kind " + quoted(kind));
}

bool try_parse_varlen_axis(std::string_view text, std::vector<VarLenSpec>& out, AxisProblem& problem) {
  return try_parse_semicolon_list(text, out, problem, kVarLenAxisAllowed, "items", try_parse_varlen);
}

std::vector<VarLenSpec> parse_varlen_axis(std::string_view text, std::string_view field) {
  std::vector<VarLenSpec> out;
  AxisProblem p;
  if (!try_parse_varlen_axis(text, out, p)) throw SpecError(format_field_error(field, text, p));
  return out;
}

std::string format_varlen(const VarLenSpec& v) {
  std::ostringstream s;
  switch (v.kind) {
    case VarLenSpec::Kind::none:
      return "none";
    case VarLenSpec::Kind::uniform:
      s << "uniform";
      if (v.low != 1) s << ':' << v.low;
      break;
    case VarLenSpec::Kind::lognormal:
      s << "lognormal:" << v.mean << ':' << v.sigma;
      break;
    case VarLenSpec::Kind::list:
      s << "list:";
      for (std::size_t i = 0; i < v.lengths.size(); ++i) s << (i ? "," : "") << v.lengths[i];
      break;
    case VarLenSpec::Kind::file:
      s << "file:" << v.file;
      break;
  }
  if (v.seed) s << '@' << *v.seed;
  return s.str();
}

std::string format_varlen_axis(const std::vector<VarLenSpec>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ';';
    s += format_varlen(v[i]);
  }
  return s;
}

std::string varlen_list_text(const Problem& p) {
  VarLenSpec v;
  v.kind = VarLenSpec::Kind::list;
  v.lengths = p.varlen.q;
  return format_varlen(v);
}

std::vector<std::int64_t> draw_lengths(const VarLenSpec& v, std::int64_t batch, std::int64_t cap,
                                       std::uint64_t run_seed, const std::string& where) {
  std::vector<std::int64_t> pool = v.lengths;
  if (v.kind == VarLenSpec::Kind::file) {
    std::ifstream f(v.file);
    if (!f) throw SpecError(where + ": varlen file '" + v.file + "' cannot be read");
    std::string token;
    while (f >> token) {
      for (char& c : token)
        if (c == ',') c = ' ';
      std::istringstream items(token);
      std::int64_t x = 0;
      while (items >> x)
        if (x >= 1) pool.push_back(x);
    }
    if (pool.empty()) throw SpecError(where + ": varlen file '" + v.file + "' holds no length >= 1");
  }
  SplitMix rng{v.seed.value_or(run_seed) ^ 0x5641524C454E5331ull};  // "VARLENS1"
  std::vector<std::int64_t> out(static_cast<std::size_t>(batch));
  for (std::int64_t b = 0; b < batch; ++b) {
    std::int64_t len = 1;
    switch (v.kind) {
      case VarLenSpec::Kind::none:
        len = cap;
        break;
      case VarLenSpec::Kind::uniform:
        len = v.low >= cap ? cap : v.low + rng.below(cap - v.low + 1);
        break;
      case VarLenSpec::Kind::lognormal: {
        const double u1 = 1.0 - rng.unit(), u2 = rng.unit();  // Box-Muller, u1 in (0, 1]
        const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
        const double mu = std::log(v.mean) - 0.5 * v.sigma * v.sigma;  // so that the mean is `mean`
        len = static_cast<std::int64_t>(std::llround(std::min(std::exp(mu + v.sigma * z), 1e18)));
        break;
      }
      case VarLenSpec::Kind::list:
        len = pool[static_cast<std::size_t>(b) % pool.size()];
        break;
      case VarLenSpec::Kind::file:
        len = pool[static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(pool.size())))];
        break;
    }
    out[static_cast<std::size_t>(b)] = std::clamp<std::int64_t>(len, 1, cap);
  }
  return out;
}

}  // namespace attn
