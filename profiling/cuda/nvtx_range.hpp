// An NVTX range held for a scope, in the engine's domain: ncu and nsys find each case (and its
// metrics launch) by these names.
#pragma once
#include <nvtx3/nvToolsExt.h>

#include <string>

namespace attn {

class NvtxRange {
 public:
  NvtxRange(nvtxDomainHandle_t domain, const std::string& name) : m_domain(domain) {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name.c_str();
    nvtxDomainRangePushEx(m_domain, &a);
  }
  ~NvtxRange() { nvtxDomainRangePop(m_domain); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  nvtxDomainHandle_t m_domain;
};

}  // namespace attn
