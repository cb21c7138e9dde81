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

}  // namespace attn
