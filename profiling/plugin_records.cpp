// Loaded plug-ins as run-record entries (plugin_records.hpp).
#include "profiling/plugin_records.hpp"

#include "kernels/api/plugin_loader.hpp"

namespace attn {

std::vector<PluginRecord> loaded_plugin_records() {
  std::vector<PluginRecord> out;
  for (const PluginInfo& p : loaded_plugins())
    out.push_back(
        {p.path, p.size, p.sha256, p.name, p.kernels, p.kind, p.compile, p.watched, p.version, p.versions});
  return out;
}

std::string kernel_origin(std::string_view kernel_id) {
  const PluginInfo* p = plugin_of(kernel_id);
  if (!p) return {};
  std::string origin =
      p->kind == "python" ? p->path : (p->kind == "source" ? "source:" : "plugin:") + p->path;
  if (!p->sha256.empty()) {
    origin += '#';
    origin += p->sha256;
  }
  if (!p->versions.empty()) {
    origin += " (";
    for (std::size_t i = 0; i < p->versions.size(); ++i) {
      if (i) origin += ", ";
      origin += p->versions[i];
    }
    origin += ')';
  }
  return origin;
}

}  // namespace attn
