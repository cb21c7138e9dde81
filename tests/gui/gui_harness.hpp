// Test harness for the GUI: a private Xvfb display, attnscope-gui started under it, xdotool for
// real input events, the --widget-map file to find widgets, and PNG decoding for pixel checks.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reports/plot/plot_model.hpp"

namespace attn::guitest {

// A program on $PATH, or empty.
std::string find_program(const std::string& name);

// A child process with extra environment variables, its output in `log`.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
        const std::filesystem::path& cwd, const std::filesystem::path& log);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  // The exit code once it exits within `timeout_s`; nullopt when still running.
  std::optional<int> wait(double timeout_s);
  void kill();
  pid_t pid() const { return m_pid; }

 private:
  pid_t m_pid = -1;
  std::optional<int> m_status;
};

// Runs a command to completion (at most timeout_s) and returns {exit code, stdout}.
std::pair<int, std::string> run_capture(const std::vector<std::string>& argv,
                                        const std::vector<std::pair<std::string, std::string>>& env,
                                        double timeout_s);

// An empty folder for one test: <tmp>/attnscope-gui-<name>-<pid>.
std::filesystem::path fresh_dir(const std::string& name);

// Skips the test (with the reason printed) where xdotool or Xvfb is missing.
#define REQUIRE_X(xvfb)                                                            \
  if (find_program("xdotool").empty()) GTEST_SKIP() << "xdotool is not installed"; \
  if (!(xvfb).ok()) GTEST_SKIP() << (xvfb).error()

// Xvfb on a free display number, removed on destruction.
class Xvfb {
 public:
  explicit Xvfb(const std::filesystem::path& log_dir, const std::string& screen = "1600x1000x24");
  ~Xvfb();
  bool ok() const { return m_ok; }
  const std::string& display() const { return m_display; }
  const std::string& error() const { return m_error; }

 private:
  std::unique_ptr<Child> m_child;
  std::string m_display, m_error;
  bool m_ok = false;
};

struct Rect {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  int cx() const { return static_cast<int>((x0 + x1) / 2); }
  int cy() const { return static_cast<int>((y0 + y1) / 2); }
};

// attnscope-gui under a display, with --widget-map and helpers that act through xdotool.
class GuiSession {
 public:
  GuiSession(const Xvfb& x, const std::filesystem::path& dir, std::vector<std::string> extra_args);
  ~GuiSession();
  nlohmann::json map() const;  // the latest widget map ({} before the first frame)
  // Polls the widget map until `pred` holds; false after timeout_s.
  bool wait_for(const std::function<bool(const nlohmann::json&)>& pred, double timeout_s) const;
  std::optional<Rect> widget(const std::string& name) const;
  // The widget's rect once it has stayed put for a while: a modal appears, then is centred and
  // sized a frame or two later, and a click at its first place misses (seen under CI's load).
  std::optional<Rect> settled_widget(const std::string& name, double timeout_s = 10) const;
  // Real input: pointer motion and clicks, keys and typed text (XTEST through xdotool).
  void click(int x, int y);
  void key(const std::string& keys);
  void type(const std::string& text);
  void move(int x, int y);
  // Turns the mouse wheel `notches` steps towards the end of the content under (x, y).
  void scroll_down(int x, int y, int notches);
  std::optional<int> wait_exit(double timeout_s) { return m_child->wait(timeout_s); }
  // `keys` until `done` holds (polled every 100 ms; false once timeout_s passes): the window is focused
  // before each send, and the keys sent again every 5 s, since under CI's load a key can be lost with
  // nobody at fault.
  bool key_until(const std::string& keys, const std::function<bool()>& done, double timeout_s);
  // Ctrl+Q by key_until until the GUI exits: its exit code, none when timeout_s passed first.
  std::optional<int> quit(double timeout_s);
  const std::filesystem::path& log() const { return m_log; }
  std::string log_text() const;

 private:
  void xdo(const std::vector<std::string>& args);
  std::string m_display;
  std::filesystem::path m_dir, m_map, m_log;
  std::string m_window;  // X window id
  std::unique_ptr<Child> m_child;
};

struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgba;
};
Image read_png(const std::filesystem::path& file);

// Pixels inside `r` (minus `exclude`) whose colour is within `tolerance` (sum of |dr|+|dg|+|db|).
std::size_t count_color(const Image& img, const Rect& r, plot::Color c, int tolerance,
                        const std::optional<Rect>& exclude = std::nullopt);

}  // namespace attn::guitest
