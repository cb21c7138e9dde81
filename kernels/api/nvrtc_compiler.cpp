// NVRTC compiles and the compiled-source cache (nvrtc_compiler.hpp).
#include "kernels/api/nvrtc_compiler.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "kernels/api/embedded_headers.hpp"
#include "kernels/api/sha256.hpp"

namespace attn {

namespace fs = std::filesystem;

namespace {

// libnvrtc, opened once. dlopen rather than linking: attnscope starts (and runs every other kernel)
// on machines without the CUDA toolkit; only kernel sources need it. The signatures are NVRTC's C
// API (nvrtc.h), stable across toolkit versions.
using NvrtcResult = int;  // nvrtcResult; 0 = NVRTC_SUCCESS
using NvrtcProgram = void*;
constexpr NvrtcResult kNvrtcSuccess = 0;

struct Nvrtc {
  NvrtcResult (*version)(int*, int*) = nullptr;
  NvrtcResult (*create)(NvrtcProgram*, const char*, const char*, int, const char* const*,
                        const char* const*) = nullptr;
  NvrtcResult (*compile)(NvrtcProgram, int, const char* const*) = nullptr;
  NvrtcResult (*log_size)(NvrtcProgram, std::size_t*) = nullptr;
  NvrtcResult (*log)(NvrtcProgram, char*) = nullptr;
  NvrtcResult (*cubin_size)(NvrtcProgram, std::size_t*) = nullptr;
  NvrtcResult (*cubin)(NvrtcProgram, char*) = nullptr;
  NvrtcResult (*destroy)(NvrtcProgram*) = nullptr;
  const char* (*error_string)(NvrtcResult) = nullptr;
  std::string library_path;  // the file dlopen found
  std::string include_dir;   // the toolkit's include/ beside it, when there is one
};

std::vector<std::string> nvrtc_candidates() {
  std::vector<std::string> out = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(var)) out.push_back(std::string(root) + "/lib64/libnvrtc.so");
  out.push_back("/usr/local/cuda/lib64/libnvrtc.so");
  return out;
}

const Nvrtc& nvrtc() {
  static const Nvrtc lib = [] {
    Nvrtc n;
    void* h = nullptr;
    std::string tried;
    for (const std::string& name : nvrtc_candidates()) {
      if ((h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
      tried += (tried.empty() ? "" : ", ") + name;
    }
    if (!h)
      throw PluginError("cannot load NVRTC (tried " + tried +
                        "); kernel sources need the CUDA toolkit's libnvrtc: install it or set CUDA_HOME");
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, name));
      if (!fn) throw PluginError(std::string("libnvrtc has no symbol ") + name);
    };
    sym(n.version, "nvrtcVersion");
    sym(n.create, "nvrtcCreateProgram");
    sym(n.compile, "nvrtcCompileProgram");
    sym(n.log_size, "nvrtcGetProgramLogSize");
    sym(n.log, "nvrtcGetProgramLog");
    sym(n.cubin_size, "nvrtcGetCUBINSize");
    sym(n.cubin, "nvrtcGetCUBIN");
    sym(n.destroy, "nvrtcDestroyProgram");
    sym(n.error_string, "nvrtcGetErrorString");
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(n.version), &info) && info.dli_fname) {
      std::error_code ec;
      n.library_path = fs::canonical(info.dli_fname, ec).string();
      const fs::path inc = fs::path(n.library_path).parent_path().parent_path() / "include";
      if (!ec && fs::exists(inc / "cuda_fp16.h", ec)) n.include_dir = inc.string();
    }
    if (n.include_dir.empty())
      for (const char* root : std::initializer_list<const char*>{std::getenv("CUDA_HOME"),
                                                                 std::getenv("CUDA_PATH"), "/usr/local/cuda"})
        if (std::error_code ec; root && fs::exists(fs::path(root) / "include" / "cuda_fp16.h", ec)) {
          n.include_dir = (fs::path(root) / "include").string();
          break;
        }
    return n;
  }();
  return lib;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw PluginError(p.string() + ": cannot read the kernel source");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every file `text` includes with "..." that exists beside it or in `dirs` (recursively), with its
// contents: what the cache key must cover besides the source itself.
void quoted_includes(const std::string& text, const fs::path& dir, const std::vector<std::string>& dirs,
                     std::map<std::string, std::string>& seen) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t hash = line.find_first_not_of(" \t");
    if (hash == std::string::npos || line[hash] != '#') continue;
    const std::size_t inc = line.find("include", hash);
    const std::size_t open = line.find('"', hash);
    if (inc == std::string::npos || open == std::string::npos || open < inc) continue;
    const std::size_t close = line.find('"', open + 1);
    if (close == std::string::npos) continue;
    const std::string name = line.substr(open + 1, close - open - 1);
    std::error_code ec;
    fs::path file = fs::weakly_canonical(dir / name, ec);
    for (std::size_t i = 0; i < dirs.size() && (ec || !fs::is_regular_file(file, ec)); ++i)
      file = fs::weakly_canonical(fs::path(dirs[i]) / name, ec);
    if (ec || !fs::is_regular_file(file, ec) || seen.count(file.string())) continue;
    std::string body = read_file(file);
    seen.emplace(file.string(), body);
    quoted_includes(body, file.parent_path(), dirs, seen);
  }
}

std::string cache_key(const std::string& source, const std::map<std::string, std::string>& includes,
                      const std::vector<std::string>& options, const std::string& version) {
  std::string material = "attnscope-nvrtc-1\nnvrtc " + version + "\n";
  for (const std::string& o : options) material += "option " + o + "\n";
  for (const EmbeddedHeader& h : kEmbeddedHeaders)
    material += std::string("header ") + h.include_name + "\n" + h.text;
  material += "\nsource\n" + source;
  for (const auto& [path, body] : includes) material += "\ninclude " + path + "\n" + body;
  return sha256_hex(material);
}

// Writes `bytes` to `file` whole or not at all (another process may be reading the cache).
bool write_atomically(const fs::path& file, const std::string& bytes) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  const fs::path tmp = file.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out || !out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()))) return false;
  }
  fs::rename(tmp, file, ec);
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

std::string unsupported_reason(const std::vector<CompileDiagnostic>& diagnostics) {
  constexpr std::string_view kTag = "attnscope-unsupported:";
  for (const CompileDiagnostic& d : diagnostics)
    if (const std::size_t at = d.message.find(kTag); at != std::string::npos) {
      std::string why = d.message.substr(at + kTag.size());
      why.erase(0, why.find_first_not_of(' '));
      while (!why.empty() && (why.back() == '"' || why.back() == ' ')) why.pop_back();
      return why;
    }
  return {};
}

}  // namespace

std::vector<CompileDiagnostic> parse_nvrtc_log(std::string_view log) {
  std::vector<CompileDiagnostic> out;
  std::vector<std::string> lines;
  std::istringstream in{std::string(log)};
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    // FILE(LINE): SEVERITY: MESSAGE
    const std::size_t paren = l.find("): ");
    const std::size_t open = paren == std::string::npos ? paren : l.rfind('(', paren);
    if (open == std::string::npos || open == 0) continue;
    const std::string number = l.substr(open + 1, paren - open - 1);
    if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string rest = l.substr(paren + 3);
    const std::size_t colon = rest.find(": ");
    if (colon == std::string::npos) continue;
    CompileDiagnostic d;
    d.file = l.substr(0, open);
    d.line = std::stoi(number);
    d.severity = rest.substr(0, colon);
    if (d.severity.find("error") == std::string::npos && d.severity.find("warning") == std::string::npos &&
        d.severity != "remark")
      continue;
    d.message = rest.substr(colon + 2);
    // NVRTC prints the line indented by two spaces, then a caret under the column.
    if (i + 2 < lines.size() && lines[i + 2].find('^') != std::string::npos &&
        lines[i + 2].find_first_not_of(" ^") == std::string::npos) {
      d.source_line = lines[i + 1].size() >= 2 ? lines[i + 1].substr(2) : lines[i + 1];
      const std::size_t caret = lines[i + 2].find('^');
      d.column = caret >= 2 ? static_cast<int>(caret) - 1 : 1;
      i += 2;
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::string format_diagnostics(const std::vector<CompileDiagnostic>& diagnostics) {
  std::string out;
  for (const CompileDiagnostic& d : diagnostics) {
    out += d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.severity + ": " +
           d.message + "\n";
    if (!d.source_line.empty()) {
      out += "  " + d.source_line + "\n";
      if (d.column > 0) out += "  " + std::string(static_cast<std::size_t>(d.column - 1), ' ') + "^\n";
    }
  }
  return out;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtc().version(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string nvrtc_arch(int major, int minor) {
  return "sm_" + std::to_string(major) + std::to_string(minor) + (major >= 9 ? "a" : "");
}

std::string kernel_cache_dir() {
  fs::path root;
  if (const char* dir = std::getenv("ATTNSCOPE_CACHE_DIR"); dir && *dir)
    root = dir;
  else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    root = fs::path(xdg) / "attnscope";
  else if (const char* home = std::getenv("HOME"); home && *home)
    root = fs::path(home) / ".cache" / "attnscope";
  else
    root = fs::temp_directory_path() / "attnscope-cache";
  return (root / "nvrtc").string();
}

CompiledSource compile_source(const SourceBuild& build) {
  const Nvrtc& lib = nvrtc();
  const std::string source = read_file(build.path);
  std::map<std::string, std::string> includes;
  quoted_includes(source, fs::path(build.path).parent_path(), build.include_dirs, includes);

  CompiledSource out;
  out.options = {"-arch=" + build.arch, "-std=c++17", "-lineinfo", "--ptxas-options=-v",
                 "-I" + fs::path(build.path).parent_path().string()};
  for (const std::string& dir : build.include_dirs) out.options.push_back("-I" + dir);
  if (!lib.include_dir.empty()) out.options.push_back("-I" + lib.include_dir);
  for (const auto& [name, value] : build.defines) out.options.push_back("-D" + name + "=" + value);
  out.options.insert(out.options.end(), build.options.begin(), build.options.end());
  const std::string version = nvrtc_version();
  out.key = cache_key(source, includes, out.options, version);

  // One process compiles a configuration once (a refusal too: planning asks once per case); the
  // cache spares the next process.
  static std::mutex mutex;
  static std::map<std::string, CompiledSource> memo;
  static std::map<std::string, SourceCompileError> failed;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = memo.find(out.key); it != memo.end()) return it->second;
  if (auto it = failed.find(out.key); it != failed.end()) throw it->second;
  const fs::path cached = fs::path(kernel_cache_dir()) / (out.key + ".cubin");
  if (std::error_code ec; fs::is_regular_file(cached, ec)) {
    out.cubin = read_file(cached);
    if (fs::path log_file = fs::path(cached).replace_extension(".log"); fs::exists(log_file, ec))
      out.log = read_file(log_file);
    out.cache_file = cached.string();
    out.from_cache = true;
    return memo.emplace(out.key, out).first->second;
  }

  const auto start = std::chrono::steady_clock::now();
  std::vector<const char*> header_text, header_names;
  for (const EmbeddedHeader& h : kEmbeddedHeaders) {
    header_text.push_back(h.text);
    header_names.push_back(h.include_name);
  }
  NvrtcProgram prog = nullptr;
  if (const NvrtcResult r =
          lib.create(&prog, source.c_str(), build.path.c_str(), static_cast<int>(header_text.size()),
                     header_text.data(), header_names.data());
      r != kNvrtcSuccess)
    throw PluginError(build.path + ": nvrtcCreateProgram: " + lib.error_string(r));
  std::vector<const char*> opts;
  for (const std::string& o : out.options) opts.push_back(o.c_str());
  const NvrtcResult result = lib.compile(prog, static_cast<int>(opts.size()), opts.data());
  std::size_t log_size = 0;
  lib.log_size(prog, &log_size);
  out.log.assign(log_size, '\0');
  if (log_size) lib.log(prog, out.log.data());
  while (!out.log.empty() && out.log.back() == '\0') out.log.pop_back();
  if (result != kNvrtcSuccess) {
    lib.destroy(&prog);
    std::vector<CompileDiagnostic> diagnostics = parse_nvrtc_log(out.log);
    std::string why = unsupported_reason(diagnostics);
    std::string what = build.path + ": NVRTC " + version + " could not compile it (-arch=" + build.arch;
    for (const auto& [name, value] : build.defines) what += " -D" + name + "=" + value;
    what += "):\n" + (diagnostics.empty() ? out.log + "\n" : format_diagnostics(diagnostics));
    throw failed.emplace(out.key, SourceCompileError(what, std::move(diagnostics), std::move(why)))
        .first->second;
  }
  std::size_t size = 0;
  lib.cubin_size(prog, &size);
  out.cubin.assign(size, '\0');
  lib.cubin(prog, out.cubin.data());
  lib.destroy(&prog);
  out.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (write_atomically(cached, out.cubin)) {
    write_atomically(fs::path(cached).replace_extension(".log"), out.log);
    out.cache_file = cached.string();
  }
  return memo.emplace(out.key, out).first->second;
}

}  // namespace attn
