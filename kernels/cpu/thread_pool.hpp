// Splits [0, n) across hardware threads; used by the CPU kernels to run over B x H.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace attn {

template <class Fn>
void parallel_for(std::int64_t n, Fn&& fn) {
  const auto hw = static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  const std::int64_t workers = std::min(n, hw);
  if (workers <= 1) {
    for (std::int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(workers));
  for (std::int64_t t = 0; t < workers; ++t) {
    threads.emplace_back([&] {
      for (std::int64_t i = next++; i < n; i = next++) {
        try {
          fn(i);
        } catch (...) {
          std::lock_guard lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace attn
