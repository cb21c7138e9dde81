// CLI11's help without its parser type tags: "--seq TEXT" and "--width INT:INT in [320 - 4000]"
// tell the parser's types, not the user's values; the description says what a value is.
#pragma once
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

namespace attn::cli {

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override;
};

// " TEXT:{line,bars}=auto" -> " {line,bars}=auto", " INT:INT in [1 - 9]=3" -> " [1 - 9]=3",
// " TEXT REQUIRED" -> " REQUIRED"; custom names (" K1,K2,...", " FILE") stay.
std::string strip_type_tags(const std::string& opts);

// Installs HelpFormatter on `app`; subcommands added later inherit it.
inline void use_help_formatter(CLI::App& app) { app.formatter(std::make_shared<HelpFormatter>()); }

}  // namespace attn::cli
