// The `// @attnscope key: value` lines at the top of a kernel source (.cu for --kernel-source):
// what attnscope needs to list, plan and check the kernel before it is compiled.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/api/kernel_spec.hpp"

namespace attn {

// A kernel source that cannot be used as written: "FILE:LINE: what is wrong; what is expected".
class SourceDirectiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SourceDirectives {
  std::string id;                         // `id:` family.variant (required)
  std::string description;                // `description:` one line (required)
  std::string entry = "attn_forward";     // `entry:` the extern "C" __global__ function
  bool writes_lse = false;                // `writes_lse` (a flag)
  double stated_rel_l2 = 0;               // `stated_rel_l2: 2e-3` (0 = the dtype bound)
  std::vector<KnobSpec> knobs;            // `knob: NAME values=1,2 default=1 help=text...`
  std::vector<std::string> options;       // `option: -maxrregcount=128` (extra NVRTC options, repeatable)
  std::vector<std::string> include_dirs;  // `include_dir: ../common` (relative to the file; repeatable)
};

// Reads every line of the form `// @attnscope key: value` (any position in the file); other lines
// are source. Throws SourceDirectiveError naming `path`, the line and the key for an unknown key, a
// missing id or description, a malformed knob or number.
SourceDirectives parse_source_directives(std::string_view text, const std::string& path);

}  // namespace attn
