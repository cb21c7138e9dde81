// Plug-in libraries turned into registry entries (plugin_loader.hpp).
#include "kernels/api/plugin_loader.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "include/attnscope/plugin.h"
#include "kernels/api/plugin_abi.hpp"
#include "kernels/api/python_entry.hpp"
#include "kernels/api/sha256.hpp"
#include "kernels/api/source_kernel.hpp"
#include "kernels/registry.hpp"

namespace attn {

namespace {

std::vector<PluginInfo>& plugins() {
  static std::vector<PluginInfo> p;
  return p;
}

// Every knob the kernel declares, with the case's value (0 = its default).
std::vector<attn_knob> knobs_to_abi(const attn_kernel& k, const Knobs& knobs) {
  std::vector<attn_knob> out;
  for (int32_t i = 0; i < k.n_knobs; ++i)
    out.push_back({k.knobs[i].name, knob_value(knobs, k.knobs[i].name)});
  return out;
}

// The backward entry of kernel `i` of a table, or null (version 1 tables have none).
const attn_kernel_backward* backward_of(const attn_plugin& t, int32_t i) {
  if (t.abi_version < 2 || !t.backward || !t.backward[i].run) return nullptr;
  return &t.backward[i];
}

class PluginKernel final : public PreparedKernel {
 public:
  PluginKernel(const attn_kernel& k, const attn_kernel_backward* backward, void* state)
      : m_k(k), m_backward(backward), m_state(state) {}
  ~PluginKernel() override {
    if (m_k.destroy) m_k.destroy(m_state);
  }
  PluginKernel(const PluginKernel&) = delete;
  PluginKernel& operator=(const PluginKernel&) = delete;
  std::size_t workspace_bytes() const override {
    return m_k.workspace_bytes ? m_k.workspace_bytes(m_state) : 0;
  }
  bool writes_lse() const override { return m_k.writes_lse != 0; }
  void run(const AttentionArgs& a) override {
    const attn_args args{a.q, a.k, a.v, a.o, a.lse, a.workspace, a.workspace_bytes, a.stream};
    const char* error = nullptr;
    if (const int code = m_k.run(m_state, &args, &error); code != 0)
      throw KernelError(std::string(m_k.id) + ": run returned " + std::to_string(code) + ": " +
                        (error ? error : "(no message)"));
  }
  std::size_t backward_workspace_bytes() const override {
    return m_backward && m_backward->workspace_bytes ? m_backward->workspace_bytes(m_state) : 0;
  }
  void run_backward(const BackwardArgs& a) override {
    if (!m_backward) throw KernelError(std::string(m_k.id) + " has no backward");
    const attn_backward_args args{
        a.q, a.k, a.v, a.o, a.d_o, a.lse, a.dq, a.dk, a.dv, a.workspace, a.workspace_bytes, a.stream};
    const char* error = nullptr;
    if (const int code = m_backward->run(m_state, &args, &error); code != 0)
      throw KernelError(std::string(m_k.id) + ": backward run returned " + std::to_string(code) + ": " +
                        (error ? error : "(no message)"));
  }

 private:
  const attn_kernel& m_k;
  const attn_kernel_backward* m_backward;
  void* m_state;
};

KernelSpec spec_of(const attn_kernel& k, const attn_kernel_backward* backward) {
  KernelSpec s;
  s.id = k.id;
  s.description = k.description;
  s.backend = k.backend == ATTN_BACKEND_CUDA ? Backend::cuda : Backend::cpu;
  for (int32_t i = 0; i < k.n_knobs; ++i) {
    const attn_knob_spec& ks = k.knobs[i];
    KnobSpec spec{ks.name, std::vector<int>(ks.values, ks.values + ks.n_values), ks.default_value,
                  ks.help ? ks.help : ""};
    s.knobs.push_back(std::move(spec));
  }
  const attn_kernel* kp = &k;
  s.why_not = [kp](const Problem& p, const Knobs& knobs) -> std::string {
    if (!kp->why_not) return {};
    const attn_problem a = to_abi(p);
    const std::vector<attn_knob> kn = knobs_to_abi(*kp, knobs);
    const char* why = kp->why_not(&a, kn.data(), static_cast<int32_t>(kn.size()));
    return why ? std::string(why) : std::string();
  };
  s.prepare = [kp, backward](const Problem& p, const Knobs& knobs) -> std::unique_ptr<PreparedKernel> {
    const attn_problem a = to_abi(p);
    const std::vector<attn_knob> kn = knobs_to_abi(*kp, knobs);
    void* state = nullptr;
    const char* error = nullptr;
    if (const int code = kp->prepare(&a, kn.data(), static_cast<int32_t>(kn.size()), &state, &error);
        code != 0)
      throw KernelError(std::string(kp->id) + ": prepare returned " + std::to_string(code) + ": " +
                        (error ? error : "(no message)"));
    return std::make_unique<PluginKernel>(*kp, backward, state);
  };
  if (backward) {
    s.backward_why_not = [kp, backward](const Problem& p, const Knobs& knobs) -> std::string {
      if (!backward->why_not) return {};
      const attn_problem a = to_abi(p);
      const std::vector<attn_knob> kn = knobs_to_abi(*kp, knobs);
      const char* why = backward->why_not(&a, kn.data(), static_cast<int32_t>(kn.size()));
      return why ? std::string(why) : std::string();
    };
  }
  if (k.stated_rel_l2 > 0) {
    const double rel = k.stated_rel_l2;
    s.stated_bound = [rel](const Problem&) { return StatedBound{rel, 8 * rel, "stated by the plug-in"}; };
  }
  return s;
}

bool valid_id(std::string_view id) {
  const auto dot = id.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == id.size()) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
           c == '.' || c == '_' || c == '-';
  });
}

// Whether `id` belongs to `previous`, the earlier version of a watched file (its ids may be taken over).
bool owned_by(const PluginInfo* previous, const std::string& id) {
  return previous &&
         std::find(previous->kernels.begin(), previous->kernels.end(), id) != previous->kernels.end();
}

// Checks one library's table; throws PluginError naming the field and what was expected.
// `previous`: the earlier version of the same watched file, whose ids this one may take over.
void check_table(const std::string& path, const attn_plugin& t, const PluginInfo* previous) {
  auto fail = [&](const std::string& what) { throw PluginError(path + ": " + what); };
  if (t.abi_version < ATTNSCOPE_PLUGIN_ABI_MIN_VERSION || t.abi_version > ATTNSCOPE_PLUGIN_ABI_VERSION)
    fail("attn_plugin.abi_version is " + std::to_string(t.abi_version) + "; this attnscope reads versions " +
         std::to_string(ATTNSCOPE_PLUGIN_ABI_MIN_VERSION) + " to " +
         std::to_string(ATTNSCOPE_PLUGIN_ABI_VERSION) +
         " (include/attnscope/plugin.h): rebuild the plug-in against it");
  if (t.n_kernels < 1 || !t.kernels)
    fail("attn_plugin.kernels is empty (n_kernels " + std::to_string(t.n_kernels) +
         "); expected at least one attn_kernel");
  std::vector<std::string> ids;
  for (int32_t i = 0; i < t.n_kernels; ++i) {
    const attn_kernel& k = t.kernels[i];
    const std::string at = "kernels[" + std::to_string(i) + "]";
    if (!k.id) fail(at + ".id is NULL; expected \"family.variant\"");
    const std::string id = k.id;
    const std::string where = at + " (" + id + ")";
    if (!valid_id(id))
      fail(where + ".id: expected \"family.variant\" in lower case letters, digits, '_' or '-'");
    if (!k.description) fail(where + ".description is NULL; expected one line of text");
    if (k.backend != ATTN_BACKEND_CPU && k.backend != ATTN_BACKEND_CUDA)
      fail(where + ".backend is " + std::to_string(k.backend) +
           "; expected ATTN_BACKEND_CPU (0) or ATTN_BACKEND_CUDA (1)");
    if (!k.prepare) fail(where + ".prepare is NULL; expected a function");
    if (!k.run) fail(where + ".run is NULL; expected a function");
    if (!k.destroy) fail(where + ".destroy is NULL; expected a function");
    if (k.n_knobs < 0 || (k.n_knobs > 0 && !k.knobs))
      fail(where + ".knobs: NULL with n_knobs " + std::to_string(k.n_knobs));
    for (int32_t j = 0; j < k.n_knobs; ++j) {
      const attn_knob_spec& ks = k.knobs[j];
      if (!ks.name || ks.n_values < 1 || !ks.values)
        fail(where + ".knobs[" + std::to_string(j) + "]: expected a name and at least one value");
    }
    if (t.abi_version >= 2 && t.backward && t.backward[i].run && !k.writes_lse)
      fail(where + ": backward[" + std::to_string(i) +
           "].run is set but writes_lse is 0; the backward reads the forward's LSE");
    if ((find_kernel(id) && !owned_by(previous, id)) || std::find(ids.begin(), ids.end(), id) != ids.end()) {
      const PluginInfo* owner = plugin_of(id);
      fail(where + ".id: kernel '" + id + "' is already registered" +
           (owner ? " by " + owner->path : std::string(" (a built-in kernel)")) + "; ids must be unique");
    }
    ids.push_back(id);
  }
}

PluginInfo load_source(const std::string& path, const PluginInfo* previous, std::vector<KernelSpec>& specs) {
  SourceDirectives d;
  KernelSpec spec = kernel_source_spec(path, d);
  if (find_kernel(spec.id) && !owned_by(previous, spec.id)) {
    const PluginInfo* owner = plugin_of(spec.id);
    throw PluginError(path + ": id: kernel '" + spec.id + "' is already registered" +
                      (owner ? " by " + owner->path : std::string(" (a built-in kernel)")) +
                      "; ids must be unique");
  }
  PluginInfo info;
  info.path = path;
  std::error_code ec;
  info.size = static_cast<std::int64_t>(std::filesystem::file_size(path, ec));
  info.sha256 = sha256_file(path);
  info.name = "kernel source";
  info.kind = "source";
  info.kernels = {spec.id};
  info.compile = {"NVRTC", "-arch=" + source_arch(), "-std=c++17", "-lineinfo"};
  try {
    info.compile[0] += " " + nvrtc_version();
  } catch (const PluginError&) {
    // Listing works without NVRTC; a case that needs the compiler says it is missing.
  }
  info.compile.insert(info.compile.end(), d.options.begin(), d.options.end());
  specs.push_back(std::move(spec));
  return info;
}

// One library or kernel source at `path` (absolute, existing): its kernels' specs into `specs`,
// nothing registered yet.
PluginInfo load_one(const std::string& path, const PluginInfo* previous, std::vector<KernelSpec>& specs) {
  if (is_kernel_source(path)) return load_source(path, previous, specs);
  // RTLD_LOCAL: two plug-ins may define the same symbol names. Never unloaded: kernels keep
  // pointers into the library's tables.
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    throw PluginError(path + ": cannot load: " + (e ? e : "dlopen failed"));
  }
  void* sym = ::dlsym(lib, ATTNSCOPE_PLUGIN_ENTRY);
  if (!sym) {
    ::dlclose(lib);
    throw PluginError(path + ": no symbol '" ATTNSCOPE_PLUGIN_ENTRY
                             "'; expected extern \"C\" const attn_plugin* attnscope_plugin(void) "
                             "(include/attnscope/plugin.h)");
  }
  const attn_plugin* table = reinterpret_cast<attn_plugin_entry>(sym)();
  if (!table) {
    ::dlclose(lib);
    throw PluginError(path + ": attnscope_plugin() returned NULL; expected its kernel table");
  }
  try {
    check_table(path, *table, previous);
  } catch (...) {
    ::dlclose(lib);
    throw;
  }
  PluginInfo info;
  std::error_code ec;
  info.path = path;
  info.size = static_cast<std::int64_t>(std::filesystem::file_size(path, ec));
  info.sha256 = sha256_file(path);
  info.name = table->name ? table->name : std::filesystem::path(path).filename().string();
  for (int32_t i = 0; i < table->n_kernels; ++i) {
    specs.push_back(spec_of(table->kernels[i], backward_of(*table, i)));
    info.kernels.push_back(table->kernels[i].id);
  }
  return info;
}

// A Python entry through the front-end's loader (python_entry.hpp).
PluginInfo load_python(const PythonEntry& entry, std::vector<KernelSpec>& specs) {
  PythonKernels loaded = load_python_entry(entry);
  PluginInfo info;
  info.path = entry.text();
  info.kind = "python";
  info.name = loaded.name;
  info.versions = std::move(loaded.versions);
  if (!entry.builtin()) {
    std::error_code ec;
    info.size = static_cast<std::int64_t>(std::filesystem::file_size(entry.file, ec));
    info.sha256 = sha256_file(entry.file);
  }
  for (KernelSpec& s : loaded.specs) {
    if (const KernelSpec* existing = find_kernel(s.id)) {
      const PluginInfo* owner = plugin_of(existing->id);
      throw PluginError(entry.text() + ": kernel '" + s.id + "' is already registered" +
                        (owner ? " by " + owner->path : std::string(" (a built-in kernel)")) +
                        "; give this one another id with =ID");
    }
    info.kernels.push_back(s.id);
    specs.push_back(std::move(s));
  }
  return info;
}

}  // namespace

void load_plugins(const std::vector<std::string>& paths) {
  for (const std::string& given : paths) {
    if (const std::optional<PythonEntry> entry = parse_python_entry(given)) {
      const std::string text = entry->text();
      if (std::any_of(plugins().begin(), plugins().end(),
                      [&](const PluginInfo& p) { return p.path == text; }))
        continue;
      if (!entry->builtin() && !std::filesystem::is_regular_file(entry->file))
        throw PluginError(text + ": no such file " + entry->file + " (--python-kernel FILE.py:FUNC[=ID])");
      std::vector<KernelSpec> specs;
      PluginInfo info = load_python(*entry, specs);
      register_plugin_kernels(std::move(specs));
      plugins().push_back(std::move(info));
      continue;
    }
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(given, ec);
    const std::string path = ec ? given : abs.lexically_normal().string();
    if (std::any_of(plugins().begin(), plugins().end(), [&](const PluginInfo& p) { return p.path == path; }))
      continue;
    if (!std::filesystem::is_regular_file(path, ec))
      throw PluginError(
          path + (is_kernel_source(path)
                      ? ": no such file (--kernel-source); expected a .cu file"
                      : ": no such file (--plugin or ATTNSCOPE_PLUGIN_PATH); expected a shared library"));
    std::vector<KernelSpec> specs;
    PluginInfo info = load_one(path, nullptr, specs);
    register_plugin_kernels(std::move(specs));
    plugins().push_back(std::move(info));
  }
}

const PluginInfo& load_plugin_version(const std::string& snapshot, const std::string& watched, int version) {
  const auto previous = std::find_if(plugins().begin(), plugins().end(), [&](const PluginInfo& p) {
    return !p.watched.empty() && p.watched == watched;
  });
  std::vector<KernelSpec> specs;
  PluginInfo info = load_one(snapshot, previous == plugins().end() ? nullptr : &*previous, specs);
  info.watched = watched;
  info.version = version;
  replace_plugin_kernels(std::move(specs));
  if (previous != plugins().end()) {
    *previous = std::move(info);
    return *previous;
  }
  plugins().push_back(std::move(info));
  return plugins().back();
}

const std::vector<PluginInfo>& loaded_plugins() { return plugins(); }

std::vector<std::string> loaded_plugin_paths() {
  std::vector<std::string> out;
  for (const PluginInfo& p : plugins()) out.push_back(p.path);
  return out;
}

const PluginInfo* plugin_of(std::string_view kernel_id) {
  for (const PluginInfo& p : plugins())
    if (std::find(p.kernels.begin(), p.kernels.end(), kernel_id) != p.kernels.end()) return &p;
  return nullptr;
}

std::vector<std::string> plugin_paths(const std::vector<std::string>& extra,
                                      const std::vector<std::string>& kernel_sources) {
  std::vector<std::string> out;
  if (const char* env = std::getenv("ATTNSCOPE_PLUGIN_PATH")) {
    std::string s = env;
    std::size_t start = 0;
    while (start <= s.size()) {
      const std::size_t end = std::min(s.find(':', start), s.size());
      if (end > start) out.push_back(s.substr(start, end - start));
      start = end + 1;
    }
  }
  out.insert(out.end(), extra.begin(), extra.end());
  out.insert(out.end(), kernel_sources.begin(), kernel_sources.end());
  return out;
}

}  // namespace attn
