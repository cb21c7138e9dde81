// The help formatter drops CLI11's parser type tags (TEXT, INT, ...) and keeps what a user needs:
// allowed values, ranges, defaults, custom value names.
#include <gtest/gtest.h>

#include "app/cli/help_formatter.hpp"

namespace attn::cli {
namespace {

TEST(HelpFormatter, StripsParserTypeTags) {
  EXPECT_EQ(strip_type_tags(" TEXT=seq"), "=seq");
  EXPECT_EQ(strip_type_tags(" TEXT"), "");
  EXPECT_EQ(strip_type_tags(" TEXT:{line,bars,auto}=auto"), " {line,bars,auto}=auto");
  EXPECT_EQ(strip_type_tags(" INT:INT in [320 - 4000]=800"), " [320 - 4000]=800");
  EXPECT_EQ(strip_type_tags(" TEXT REQUIRED"), " REQUIRED");
  EXPECT_EQ(strip_type_tags(" TEXT ..."), " ...");
  EXPECT_EQ(strip_type_tags(" FLOAT=2"), "=2");
  EXPECT_EQ(strip_type_tags(" K1,K2,..."), " K1,K2,...");  // a custom name stays
  EXPECT_EQ(strip_type_tags(" RUN_DIR|FILE ..."), " RUN_DIR|FILE ...");
}

TEST(HelpFormatter, HelpOfAnAppShowsNoTypeTags) {
  CLI::App app{"t"};
  use_help_formatter(app);
  CLI::App* sub = app.add_subcommand("plot", "p");
  std::string x = "seq", kind = "auto";
  int width = 800;
  sub->add_option("--x", x, "x axis")->capture_default_str();
  sub->add_option("--kind", kind, "kind")->check(CLI::IsMember({"line", "bars"}))->capture_default_str();
  sub->add_option("--width", width, "w")->check(CLI::Range(320, 4000))->capture_default_str();
  const std::string help = sub->help();
  EXPECT_EQ(help.find("TEXT"), std::string::npos) << help;
  EXPECT_EQ(help.find("INT"), std::string::npos) << help;
  EXPECT_NE(help.find("--x=seq"), std::string::npos) << help;
  EXPECT_NE(help.find("[320 - 4000]=800"), std::string::npos) << help;
}

}  // namespace
}  // namespace attn::cli
