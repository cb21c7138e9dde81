// attnscope's public headers as text (generated from include/attnscope/ at configure time), handed
// to NVRTC so a kernel source compiles with `#include <attnscope/kernel_source.h>` wherever
// attnscope is installed.
#pragma once

namespace attn {

struct EmbeddedHeader {
  const char* include_name;  // as a source writes it: "attnscope/plugin.h"
  const char* text;
};

// plugin.h and kernel_source.h.
extern const EmbeddedHeader kEmbeddedHeaders[2];

}  // namespace attn
