// One long-lived host thread that runs submitted work in order, on a given CUDA device: host-side
// set-up (cuDNN graph building) overlapped with GPU work the calling thread waits on. Long-lived
// because libraries cache per-thread state (a cuDNN handle per thread and device).
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

namespace attn {

class HostLane {
 public:
  HostLane();
  ~HostLane();  // finishes what was submitted, then joins
  HostLane(const HostLane&) = delete;
  HostLane& operator=(const HostLane&) = delete;

  // Runs `work` on the lane with CUDA device `device` current; its result (or exception) comes
  // back through the future.
  template <typename F>
  auto submit(int device, F work) -> std::future<decltype(work())> {
    auto task = std::make_shared<std::packaged_task<decltype(work())()>>(std::move(work));
    auto result = task->get_future();
    enqueue([device, task] {
      set_device(device);
      (*task)();
    });
    return result;
  }

 private:
  static void set_device(int device);
  void enqueue(std::function<void()> job);
  void loop();

  std::mutex m_mutex;
  std::condition_variable m_ready;
  std::deque<std::function<void()>> m_jobs;
  bool m_stop = false;
  std::thread m_thread;
};

}  // namespace attn
