// RAII descriptors, status checks and the per-thread cuDNN handle (see cudnn_graph.hpp).
#include "kernels/cudnn/cudnn_graph.hpp"

#include <cuda_runtime.h>

#include <array>
#include <utility>

#include "kernels/api/kernel_spec.hpp"

namespace attn::cudnn {

std::string status_text(cudnnStatus_t status) {
  std::string text = cudnnGetErrorString(status);
  std::array<char, 1024> last{};
  cudnnGetLastErrorString(last.data(), last.size());
  if (last[0] != '\0') text += std::string(": ") + last.data();
  return text;
}

bool is_not_supported(cudnnStatus_t status) {
  const int code = static_cast<int>(status);
  return code >= 3000 && code < 4000;
}

void fail(cudnnStatus_t status, std::string_view step) {
  const std::string msg = "cudnn.sdpa: " + std::string(step) + " failed: " + status_text(status);
  if (is_not_supported(status)) throw Unsupported(msg);
  throw KernelError(msg);
}

Descriptor::Descriptor(cudnnBackendDescriptorType_t type, std::string name) : m_name(std::move(name)) {
  check(cudnnBackendCreateDescriptor(type, &m_desc), "create descriptor " + m_name);
}

Descriptor::~Descriptor() {
  // A destroy failure cannot be reported from a destructor, and the descriptor is gone either way.
  if (m_desc) (void)cudnnBackendDestroyDescriptor(m_desc);
}

Descriptor::Descriptor(Descriptor&& other) noexcept
    : m_desc(std::exchange(other.m_desc, nullptr)), m_name(std::move(other.m_name)) {}

Descriptor& Descriptor::operator=(Descriptor&& other) noexcept {
  if (this != &other) {
    if (m_desc) (void)cudnnBackendDestroyDescriptor(m_desc);
    m_desc = std::exchange(other.m_desc, nullptr);
    m_name = std::move(other.m_name);
  }
  return *this;
}

Descriptor& Descriptor::set(cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type,
                            std::int64_t count, const void* values) {
  check(cudnnBackendSetAttribute(m_desc, attr, type, count, values),
        "set attribute " + std::to_string(static_cast<int>(attr)) + " of " + m_name);
  return *this;
}

Descriptor& Descriptor::set_i64(cudnnBackendAttributeName_t attr, std::int64_t v) {
  return set(attr, CUDNN_TYPE_INT64, 1, &v);
}

Descriptor& Descriptor::set_i64s(cudnnBackendAttributeName_t attr, const std::vector<std::int64_t>& v) {
  return set(attr, CUDNN_TYPE_INT64, static_cast<std::int64_t>(v.size()), v.data());
}

Descriptor& Descriptor::set_bool(cudnnBackendAttributeName_t attr, bool v) {
  return set(attr, CUDNN_TYPE_BOOLEAN, 1, &v);
}

Descriptor& Descriptor::set_dtype(cudnnBackendAttributeName_t attr, cudnnDataType_t v) {
  return set(attr, CUDNN_TYPE_DATA_TYPE, 1, &v);
}

Descriptor& Descriptor::set_desc(cudnnBackendAttributeName_t attr, const Descriptor& d) {
  cudnnBackendDescriptor_t raw = d.get();
  return set(attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
}

Descriptor& Descriptor::set_descs(cudnnBackendAttributeName_t attr,
                                  const std::vector<cudnnBackendDescriptor_t>& ds) {
  return set(attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<std::int64_t>(ds.size()), ds.data());
}

void Descriptor::finalize() { check(cudnnBackendFinalize(m_desc), "finalize " + m_name); }

Handle::Handle(int device) : m_device(device) { check(cudnnCreate(&m_handle), "cudnnCreate"); }

Handle::~Handle() {
  if (m_handle) (void)cudnnDestroy(m_handle);
}

std::shared_ptr<Handle> thread_handle() {
  int device = -1;
  const cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess)
    throw KernelError(std::string("cudnn.sdpa: cudaGetDevice failed: ") + cudaGetErrorName(err) + ": " +
                      cudaGetErrorString(err));
  // Weak: the handle lives exactly as long as some prepared kernel of this thread holds it.
  thread_local std::weak_ptr<Handle> cached;
  std::shared_ptr<Handle> h = cached.lock();
  if (!h || h->device() != device) {
    h = std::make_shared<Handle>(device);
    cached = h;
  }
  return h;
}

}  // namespace attn::cudnn
