// Input generation and dtype packing, threaded in fixed chunks so results do not depend on the
// number of cores.
#include "profiling/engine/inputs.hpp"

#include <cmath>
#include <cstring>

#include "kernels/api/half_convert.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace attn {

namespace {

constexpr std::int64_t kChunk = 1 << 16;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double unit_open(std::uint64_t bits) {  // (0, 1], never 0 so log() is finite
  return (static_cast<double>(bits >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

void fill_normal(std::vector<float>& out, std::int64_t n, std::uint64_t stream, DType t) {
  out.resize(static_cast<std::size_t>(n));
  const std::int64_t pairs = (n + 1) / 2;
  const std::int64_t chunks = (pairs + kChunk - 1) / kChunk;
  parallel_for(chunks, [&](std::int64_t c) {
    const std::int64_t end = std::min(pairs, (c + 1) * kChunk);
    for (std::int64_t pi = c * kChunk; pi < end; ++pi) {
      const std::uint64_t base = stream ^ (static_cast<std::uint64_t>(pi) * 2);
      const double u1 = unit_open(splitmix64(base));
      const double u2 = unit_open(splitmix64(base + 1));
      const double r = std::sqrt(-2.0 * std::log(u1));
      const double z0 = r * std::cos(2.0 * M_PI * u2), z1 = r * std::sin(2.0 * M_PI * u2);
      const std::int64_t i = 2 * pi;
      out[static_cast<std::size_t>(i)] = round_to(t, static_cast<float>(z0));
      if (i + 1 < n) out[static_cast<std::size_t>(i + 1)] = round_to(t, static_cast<float>(z1));
    }
  });
}

}  // namespace

InputStreams input_streams(std::uint64_t seed) {
  const std::uint64_t s = splitmix64(seed);
  return {splitmix64(s ^ 0x51ull) << 20, splitmix64(s ^ 0x4Bull) << 20, splitmix64(s ^ 0x56ull) << 20,
          splitmix64(s ^ 0x644Full) << 20};
}

HostInputs generate_inputs(const Problem& p, std::uint64_t seed) {
  HostInputs in;
  const InputStreams keys = input_streams(seed);
  fill_normal(in.q, p.q_elems(), keys.q, p.dtype);
  fill_normal(in.k, p.k_elems(), keys.k, p.dtype);
  fill_normal(in.v, p.v_elems(), keys.v, p.dtype);
  return in;
}

std::vector<float> generate_output_gradient(const Problem& p, std::uint64_t seed) {
  std::vector<float> d_o;
  fill_normal(d_o, p.o_elems(), input_streams(seed).d_o, p.dtype);
  return d_o;
}

std::vector<std::uint8_t> pack_as(DType t, const std::vector<float>& values) {
  const std::size_t n = values.size();
  std::vector<std::uint8_t> out(n * dtype_bytes(t));
  const auto chunks = static_cast<std::int64_t>((n + kChunk - 1) / kChunk);
  parallel_for(chunks, [&](std::int64_t c) {
    const std::size_t begin = static_cast<std::size_t>(c * kChunk);
    const std::size_t end = std::min(n, begin + kChunk);
    for (std::size_t i = begin; i < end; ++i) {
      if (t == DType::fp32) {
        std::memcpy(out.data() + 4 * i, &values[i], 4);
      } else {
        const std::uint16_t h = t == DType::fp16 ? float_to_fp16(values[i]) : float_to_bf16(values[i]);
        std::memcpy(out.data() + 2 * i, &h, 2);
      }
    }
  });
  return out;
}

std::vector<float> unpack_from(DType t, const void* bytes, std::size_t count) {
  std::vector<float> out(count);
  const auto* b = static_cast<const std::uint8_t*>(bytes);
  const auto chunks = static_cast<std::int64_t>((count + kChunk - 1) / kChunk);
  parallel_for(chunks, [&](std::int64_t c) {
    const std::size_t begin = static_cast<std::size_t>(c * kChunk);
    const std::size_t end = std::min(count, begin + kChunk);
    for (std::size_t i = begin; i < end; ++i) {
      if (t == DType::fp32) {
        std::memcpy(&out[i], b + 4 * i, 4);
      } else {
        std::uint16_t h;
        std::memcpy(&h, b + 2 * i, 2);
        out[i] = t == DType::fp16 ? fp16_to_float(h) : bf16_to_float(h);
      }
    }
  });
  return out;
}

}  // namespace attn
