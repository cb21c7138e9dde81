// Python kernel entries (kernels/api/python_entry.hpp): the FILE.py:FUNC[=ID] syntax, its errors
// naming the flag and value, the entry text that travels to workers, and load_plugins() without a
// Python at hand. The Python side itself is tested by pytest (tests/python/).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kernels/api/plugin_loader.hpp"
#include "kernels/api/python_entry.hpp"
#include "kernels/registry.hpp"
#include "profiling/sweep/preset.hpp"
#include "tests/support/spec_error.hpp"

namespace attn {
namespace {

std::string parse_error(const std::string& spec) {
  try {
    parse_python_kernel_spec(spec, "/work");
  } catch (const PluginError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PythonEntry, FileFunctionAndIdAreParsedAndTheFileMadeAbsolute) {
  const PythonEntry e = parse_python_kernel_spec("kernels/My-Attn.py:attention=mine.v1", "/work");
  EXPECT_EQ(e.file, "/work/kernels/My-Attn.py");
  EXPECT_EQ(e.function, "attention");
  EXPECT_EQ(e.id, "mine.v1");
  EXPECT_FALSE(e.builtin());
  EXPECT_EQ(e.text(), "python:/work/kernels/My-Attn.py:attention=mine.v1");
  // The default id: the file's stem and the function, in the characters an id allows.
  EXPECT_EQ(parse_python_kernel_spec("/abs/My-Attn.py:Flash.run", "/work").id, "my-attn.flash_run");
  // The entry text parses back to the same entry (workers and resumed runs load it again).
  const auto back = parse_python_entry(e.text());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->file, e.file);
  EXPECT_EQ(back->function, e.function);
  EXPECT_EQ(back->id, e.id);
}

TEST(PythonEntry, MalformedSpecsNameTheFlagTheValueAndWhatIsExpected) {
  EXPECT_EQ(parse_error("attn.py"),
            "--python-kernel 'attn.py': expected FILE.py:FUNC[=ID], e.g. my_attn.py:attention=mine.v1");
  EXPECT_EQ(parse_error("attn.cu:f"),
            "--python-kernel 'attn.cu:f': FILE 'attn.cu': expected a Python file ending in .py");
  EXPECT_EQ(parse_error("attn.py:1f"),
            "--python-kernel 'attn.py:1f': FUNC '1f': expected a Python name (letters, digits, '_', dots for "
            "attributes)");
  EXPECT_EQ(parse_error("attn.py:f=Mine"),
            "--python-kernel 'attn.py:f=Mine': ID 'Mine': expected \"family.variant\" in lower case letters, "
            "digits, '_' or '-'");
  EXPECT_EQ(parse_error("attn.py:f=mine"),
            "--python-kernel 'attn.py:f=mine': ID 'mine': expected \"family.variant\" in lower case letters, "
            "digits, '_' or '-'");
}

TEST(PythonEntry, AdapterIdsAreTheTorchAndTritonFamilies) {
  EXPECT_TRUE(is_python_adapter_id("torch.flash"));
  EXPECT_TRUE(is_python_adapter_id("triton.fa2"));
  EXPECT_FALSE(is_python_adapter_id("torch."));
  EXPECT_FALSE(is_python_adapter_id("cudnn.sdpa"));
  const auto e = parse_python_entry("python:torch.flex");
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->builtin());
  EXPECT_EQ(e->id, "torch.flex");
  EXPECT_FALSE(parse_python_entry("/lib/libmine.so"));
  EXPECT_THROW(parse_python_entry("python:cudnn.sdpa"), PluginError);
}

TEST(PythonEntry, LoadingAPythonKernelNeedsALoaderAndSaysSo) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "attnscope_entry_test.py";
  std::ofstream(file) << "def f(q, k, v, **kw):\n    pass\n";
  const std::string entry = "python:" + file.string() + ":f=entry.test";
  if (python_kernel_loader_installed()) GTEST_SKIP() << "a Python loader is installed in this process";
  try {
    load_plugins({entry});
    FAIL() << "expected PluginError";
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find(entry + ": Python kernels need attnscope's Python module"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(find_kernel("entry.test"), nullptr);
  std::filesystem::remove(file);
}

TEST(PythonEntry, ALoaderRegistersKernelsThatFollowTheRunsBackend) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "attnscope_entry_loader.py";
  std::ofstream(file) << "def g(q, k, v, **kw):\n    pass\n";
  set_python_kernel_loader([](const PythonEntry& e, Backend b) {
    PythonKernels k;
    k.name = "python callable";
    k.versions = {"Python 3.test"};
    KernelSpec s;
    s.id = e.id;
    s.description = "from " + e.function;
    s.backend = b;
    s.why_not = [](const Problem&, const Knobs&) { return std::string(); };
    k.specs.push_back(std::move(s));
    return k;
  });
  set_python_kernel_backend(Backend::cpu);
  const std::string entry = "python:" + file.string() + ":g=entry.loaded";
  load_plugins({entry});
  set_python_kernel_loader(nullptr);
  const KernelSpec* spec = find_kernel("entry.loaded");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->description, "from g");
  EXPECT_EQ(spec->backend, Backend::cpu);
  const PluginInfo* info = plugin_of("entry.loaded");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->kind, "python");
  EXPECT_EQ(info->path, entry);
  EXPECT_EQ(info->versions, std::vector<std::string>{"Python 3.test"});
  EXPECT_EQ(info->sha256.size(), 64u);
  set_python_kernel_backend(Backend::cuda);
  EXPECT_EQ(find_kernel("entry.loaded")->backend, Backend::cuda);
  set_python_kernel_backend(Backend::cpu);
  EXPECT_EQ(find_kernel("entry.loaded")->backend, Backend::cpu);
  std::filesystem::remove(file);
}

TEST(PythonEntry, PresetsNamePythonKernelsBesideThePresetAndWriteThemBack) {
  const SweepSpec s = parse_preset(
      "python_kernels = [\"k/mine.py:attention=mine.v1\", \"torch.flash\"]\nkernels = [\"mine.v1\"]\n",
      "/home/me/presets/p.toml");
  EXPECT_EQ(s.plugins, (std::vector<std::string>{"python:/home/me/presets/k/mine.py:attention=mine.v1",
                                                 "python:torch.flash"}));
  const std::string written = preset_toml(s);
  EXPECT_NE(
      written.find("python_kernels = [\"/home/me/presets/k/mine.py:attention=mine.v1\", \"torch.flash\"]"),
      std::string::npos)
      << written;
  EXPECT_EQ(parse_preset(written, "/elsewhere/saved.toml").plugins, s.plugins);
  EXPECT_EQ(
      test::error_of([] { parse_preset("python_kernels = [\"mine.cu:f\"]\n", "p.toml"); }),
      "p.toml:1:19: field 'python_kernels' = 'mine.cu:f': python_kernels 'mine.cu:f': FILE 'mine.cu': "
      "expected a Python file ending in .py; allowed: an array of \"FILE.py:FUNC[=ID]\" (FILE absolute, or "
      "relative to the preset's folder) or adapter ids (torch.flash, ...)");
}

}  // namespace
}  // namespace attn
