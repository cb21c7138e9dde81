// Small RAII layer over the cuDNN backend (graph) API: owned descriptors, typed attribute setters,
// status checks that turn cuDNN refusals into attn::Unsupported and other failures into
// attn::KernelError, and a cuDNN handle cached per thread and device.
#pragma once
#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attn::cudnn {

// "CUDNN_STATUS_X" plus cuDNN's own last error message, when it has one.
std::string status_text(cudnnStatus_t status);

// True for the CUDNN_STATUS_NOT_SUPPORTED family (3000-3999): cuDNN declines the graph, it is not broken.
bool is_not_supported(cudnnStatus_t status);

// Throws attn::Unsupported for the NOT_SUPPORTED family and attn::KernelError for anything else;
// `step` names what was being done ("finalize execution plan").
[[noreturn]] void fail(cudnnStatus_t status, std::string_view step);

inline void check(cudnnStatus_t status, std::string_view step) {
  if (status != CUDNN_STATUS_SUCCESS) fail(status, step);
}

// Owns one cudnnBackendDescriptor_t. Move-only.
class Descriptor {
 public:
  Descriptor(cudnnBackendDescriptorType_t type, std::string name);
  ~Descriptor();
  Descriptor(Descriptor&& other) noexcept;
  Descriptor& operator=(Descriptor&& other) noexcept;
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;

  cudnnBackendDescriptor_t get() const { return m_desc; }
  const std::string& name() const { return m_name; }

  Descriptor& set(cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type, std::int64_t count,
                  const void* values);
  Descriptor& set_i64(cudnnBackendAttributeName_t attr, std::int64_t v);
  Descriptor& set_i64s(cudnnBackendAttributeName_t attr, const std::vector<std::int64_t>& v);
  Descriptor& set_bool(cudnnBackendAttributeName_t attr, bool v);
  Descriptor& set_dtype(cudnnBackendAttributeName_t attr, cudnnDataType_t v);
  Descriptor& set_desc(cudnnBackendAttributeName_t attr, const Descriptor& d);
  Descriptor& set_descs(cudnnBackendAttributeName_t attr, const std::vector<cudnnBackendDescriptor_t>& ds);
  // Throws through fail(): a NOT_SUPPORTED status becomes attn::Unsupported.
  void finalize();

 private:
  cudnnBackendDescriptor_t m_desc = nullptr;
  std::string m_name;
};

// A cuDNN handle bound to the device that was current when it was made.
class Handle {
 public:
  explicit Handle(int device);
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  cudnnHandle_t get() const { return m_handle; }
  int device() const { return m_device; }

 private:
  cudnnHandle_t m_handle = nullptr;
  int m_device = -1;
};

// The calling thread's handle for the current CUDA device, shared by every prepared kernel of that
// thread and device; made on first use (cudnnCreate costs tens of milliseconds, so one per case
// would dominate preparation).
std::shared_ptr<Handle> thread_handle();

}  // namespace attn::cudnn
