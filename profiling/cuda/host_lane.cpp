// The host lane (host_lane.hpp).
#include "profiling/cuda/host_lane.hpp"

#include <cuda_runtime_api.h>

namespace attn {

HostLane::HostLane() : m_thread([this] { loop(); }) {}

HostLane::~HostLane() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_ready.notify_one();
  m_thread.join();
}

void HostLane::set_device(int device) {
  // A failure here surfaces in the work itself (its CUDA calls fail on the wrong device).
  (void)cudaSetDevice(device);
}

void HostLane::enqueue(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_jobs.push_back(std::move(job));
  }
  m_ready.notify_one();
}

void HostLane::loop() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_ready.wait(lock, [this] { return m_stop || !m_jobs.empty(); });
      if (m_jobs.empty()) return;  // stopping, nothing left
      job = std::move(m_jobs.front());
      m_jobs.pop_front();
    }
    job();
  }
}

}  // namespace attn
