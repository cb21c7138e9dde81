// GUI test harness: processes, Xvfb, xdotool, widget map and PNG reading.
#include "tests/gui/gui_harness.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/test_paths.hpp"

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#include <stb/stb_image.h>

namespace attn::guitest {

std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("attnscope-gui-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

namespace fs = std::filesystem;

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    const fs::path p = fs::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

namespace {

pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
            const fs::path& cwd, int out_fd) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
  if (out_fd >= 0) {
    ::dup2(out_fd, 1);
    ::dup2(out_fd, 2);
  }
  ::setpgid(0, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  ::_exit(127);
}

std::optional<int> wait_pid(pid_t pid, double timeout_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0) return -1;
    if (std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

Child::Child(const std::vector<std::string>& argv,
             const std::vector<std::pair<std::string, std::string>>& env, const fs::path& cwd,
             const fs::path& log) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  m_pid = spawn(argv, env, cwd, fd);
  if (fd >= 0) ::close(fd);
}

Child::~Child() { kill(); }

std::optional<int> Child::wait(double timeout_s) {
  if (m_status) return m_status;
  if (m_pid <= 0) return -1;
  m_status = wait_pid(m_pid, timeout_s);
  return m_status;
}

void Child::kill() {
  if (m_pid > 0 && !m_status) {
    ::kill(-m_pid, SIGKILL);
    ::kill(m_pid, SIGKILL);
    m_status = wait_pid(m_pid, 5);
  }
}

std::pair<int, std::string> run_capture(const std::vector<std::string>& argv,
                                        const std::vector<std::pair<std::string, std::string>>& env,
                                        double timeout_s) {
  char tmpl[] = "/tmp/attnscope-gui-test-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  const pid_t pid = spawn(argv, env, {}, fd);
  std::optional<int> code = wait_pid(pid, timeout_s);
  if (!code) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    code = wait_pid(pid, 5);
  }
  ::close(fd);
  std::ifstream in(tmpl);
  std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ::unlink(tmpl);
  return {code.value_or(-1), out};
}

namespace {

// The pid an X server wrote into display n's lock file (text, space padded); -1 when unreadable.
pid_t lock_pid(int n) {
  std::ifstream in("/tmp/.X" + std::to_string(n) + "-lock");
  long pid = -1;
  if (!(in >> pid)) return -1;
  return static_cast<pid_t>(pid);
}

// Whether display n accepts a connection: its socket can exist a moment before the server listens
// on it, and a client (GLFW) started in that moment fails to open the display.
bool accepts_connections(int n) {
  const std::string path = "/tmp/.X11-unix/X" + std::to_string(n);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

Xvfb::Xvfb(const fs::path& log_dir, const std::string& screen) {
  const std::string xvfb = find_program("Xvfb");
  if (xvfb.empty()) {
    m_error = "Xvfb is not installed (Debian package xvfb)";
    return;
  }
  // A display number nobody uses: neither a socket nor a lock file. Two tests starting at once (ctest
  // -j) can both pick the same free number; the loser's Xvfb exits ("server already active") while the
  // socket it sees is the winner's, which goes when the other test ends. So a display counts as ours
  // only when its lock file names our Xvfb's pid; otherwise the next free number is tried.
  int n = 140 + static_cast<int>(::getpid() % 200);
  for (int attempt = 0; attempt < 8; ++attempt) {
    for (int tries = 0; tries < 200; ++tries, n = 140 + (n - 139) % 400) {
      if (!fs::exists("/tmp/.X11-unix/X" + std::to_string(n)) &&
          !fs::exists("/tmp/.X" + std::to_string(n) + "-lock"))
        break;
    }
    m_display = ":" + std::to_string(n);
    m_child = std::make_unique<Child>(
        std::vector<std::string>{xvfb, m_display, "-screen", "0", screen, "-nolisten", "tcp", "-noreset"},
        std::vector<std::pair<std::string, std::string>>{}, fs::path(), log_dir / "xvfb.log");
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < until) {
      if (fs::exists("/tmp/.X11-unix/X" + std::to_string(n))) {
        if (lock_pid(n) == m_child->pid() && accepts_connections(n)) {
          m_ok = true;
          return;
        }
      }
      if (m_child->wait(0.05)) break;  // exited: the number was taken after all
    }
    m_child.reset();
    n = 140 + (n - 139) % 400;
  }
  m_error = "Xvfb " + m_display + " did not start (see " + (log_dir / "xvfb.log").string() + ")";
}

Xvfb::~Xvfb() = default;

GuiSession::GuiSession(const Xvfb& x, const fs::path& dir, std::vector<std::string> extra_args)
    : m_display(x.display()), m_dir(dir), m_map(dir / "widgets.json"), m_log(dir / "gui.log") {
  std::vector<std::string> argv{
      attn::test::gui_binary(), "gui", "--no-persist", "--size", "1600x1000", "--widget-map", m_map.string()};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  m_child = std::make_unique<Child>(argv,
                                    std::vector<std::pair<std::string, std::string>>{
                                        {"DISPLAY", m_display},
                                        {"XDG_CONFIG_HOME", (dir / "config").string()},
                                        {"ATTNSCOPE_PRESETS", attn::test::source_dir() + "/assets/presets"},
                                        {"LIBGL_ALWAYS_SOFTWARE", "1"}},
                                    dir, m_log);
}

GuiSession::~GuiSession() { m_child->kill(); }

std::string GuiSession::log_text() const {
  std::ifstream in(m_log);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

nlohmann::json GuiSession::map() const {
  std::ifstream in(m_map);
  if (!in) return nlohmann::json::object();
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    return nlohmann::json::object();
  }
}

bool GuiSession::wait_for(const std::function<bool(const nlohmann::json&)>& pred, double timeout_s) const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < until) {
    const nlohmann::json j = map();
    try {
      if (!j.empty() && pred(j)) return true;
    } catch (const nlohmann::json::exception&) {
      // A field not there yet.
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::optional<Rect> GuiSession::widget(const std::string& name) const {
  const nlohmann::json j = map();
  if (!j.contains("widgets") || !j["widgets"].contains(name)) return std::nullopt;
  const auto& a = j["widgets"][name];
  return Rect{a[0].get<double>(), a[1].get<double>(), a[2].get<double>(), a[3].get<double>()};
}

std::optional<Rect> GuiSession::settled_widget(const std::string& name, double timeout_s) const {
  // The map is rewritten only when something in it changes, so "settled" is a rect that no rewrite
  // has moved for a while: several frames even at CI's slowest (~50 ms a frame under load).
  constexpr auto kStill = std::chrono::milliseconds(400);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::optional<Rect> seen;
  auto seen_at = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < until) {
    const std::optional<Rect> r = widget(name);
    const auto now = std::chrono::steady_clock::now();
    const bool same =
        r && seen && seen->x0 == r->x0 && seen->y0 == r->y0 && seen->x1 == r->x1 && seen->y1 == r->y1;
    if (!same) {
      seen = r;
      seen_at = now;
    } else if (now - seen_at >= kStill) {
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  return std::nullopt;
}

void GuiSession::xdo(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"xdotool"};
  argv.insert(argv.end(), args.begin(), args.end());
  run_capture(argv, {{"DISPLAY", m_display}}, 10);
}

void GuiSession::move(int x, int y) {
  if (m_window.empty()) {
    const auto [code, out] =
        run_capture({"xdotool", "search", "--sync", "--name", "^attnscope$"}, {{"DISPLAY", m_display}}, 15);
    std::stringstream ss(out);
    ss >> m_window;
  }
  // Relative to our window; then focus it so keys reach it (Xvfb runs no window manager).
  xdo({"mousemove", "--window", m_window, std::to_string(x), std::to_string(y)});
  xdo({"windowfocus", m_window});
}

void GuiSession::scroll_down(int x, int y, int notches) {
  move(x, y);
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  for (int i = 0; i < notches; ++i) {
    xdo({"click", "5"});  // X button 5: the wheel turned down
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // a frame publishes the new layout
}

void GuiSession::click(int x, int y) {
  move(x, y);
  std::this_thread::sleep_for(std::chrono::milliseconds(120));  // a frame sees the hover first
  xdo({"click", "1"});
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
}

void GuiSession::key(const std::string& keys) {
  if (m_window.empty()) move(5, 5);
  xdo({"key", "--delay", "60", keys});
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
}

bool GuiSession::key_until(const std::string& keys, const std::function<bool()>& done, double timeout_s) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point until =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  while (true) {
    if (!m_window.empty()) xdo({"windowfocus", m_window});  // key() finds the window when it is not known
    key(keys);
    const Clock::time_point resend = std::min(until, Clock::now() + std::chrono::seconds(5));
    while (Clock::now() < resend) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (Clock::now() >= until) return done();
  }
}

std::optional<int> GuiSession::quit(double timeout_s) {
  std::optional<int> code;
  key_until(
      "ctrl+q", [&] { return (code = m_child->wait(0)).has_value(); }, timeout_s);
  return code;
}

void GuiSession::type(const std::string& text) {
  xdo({"type", "--delay", "40", text});
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
}

Image read_png(const fs::path& file) {
  Image img;
  int n = 0;
  unsigned char* data = stbi_load(file.c_str(), &img.width, &img.height, &n, 4);
  if (!data) return img;
  img.rgba.assign(data,
                  data + static_cast<std::size_t>(img.width) * static_cast<std::size_t>(img.height) * 4);
  stbi_image_free(data);
  return img;
}

std::size_t count_color(const Image& img, const Rect& r, plot::Color c, int tolerance,
                        const std::optional<Rect>& ex) {
  std::size_t n = 0;
  const int x0 = std::max(0, static_cast<int>(r.x0)), y0 = std::max(0, static_cast<int>(r.y0));
  const int x1 = std::min(img.width, static_cast<int>(r.x1)),
            y1 = std::min(img.height, static_cast<int>(r.y1));
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      if (ex && x >= ex->x0 && x <= ex->x1 && y >= ex->y0 && y <= ex->y1) continue;
      const std::uint8_t* p = &img.rgba[(static_cast<std::size_t>(y) * static_cast<std::size_t>(img.width) +
                                         static_cast<std::size_t>(x)) *
                                        4];
      const int d = std::abs(p[0] - c.r) + std::abs(p[1] - c.g) + std::abs(p[2] - c.b);
      if (d <= tolerance) ++n;
    }
  return n;
}

}  // namespace attn::guitest
