// Snapshots of watched kernel files (kernel_versions.hpp).
#include "kernels/api/kernel_versions.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "kernels/api/nvrtc_compiler.hpp"
#include "kernels/api/plugin_loader.hpp"
#include "kernels/api/sha256.hpp"
#include "kernels/api/source_kernel.hpp"

namespace attn {

namespace fs = std::filesystem;

KernelSnapshot snapshot_kernel_file(const std::string& watched) {
  std::string bytes;
  {
    std::ifstream in(watched, std::ios::binary);
    if (!in) throw PluginError(watched + ": cannot read the watched file");
    std::ostringstream s;
    s << in.rdbuf();
    bytes = s.str();
  }
  KernelSnapshot snap;
  snap.sha256 = sha256_hex(bytes);
  const fs::path w(watched);
  const fs::path dir = fs::path(kernel_cache_dir()).parent_path() / "versions";
  const fs::path copy = dir / (w.stem().string() + "-" + snap.sha256.substr(0, 12) + w.extension().string());
  snap.path = copy.string();
  std::error_code ec;
  if (fs::is_regular_file(copy, ec)) return snap;
  std::string out;
  if (is_kernel_source(watched)) {
    out = "// @attnscope include_dir: " + w.parent_path().string() + "\n#line 1 \"" + watched + "\"\n";
  }
  out += bytes;
  fs::create_directories(dir, ec);
  const fs::path tmp = copy.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f || !f.write(out.data(), static_cast<std::streamsize>(out.size())))
      throw PluginError(watched + ": cannot write its snapshot " + tmp.string());
  }
  fs::rename(tmp, copy, ec);
  if (ec) throw PluginError(watched + ": cannot write its snapshot " + copy.string() + ": " + ec.message());
  return snap;
}

}  // namespace attn
