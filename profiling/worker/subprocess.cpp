// fork/exec with three pipes, a private process group and a parent-death signal (see
// subprocess.hpp). Everything the child needs is built before fork(): between fork and exec it
// calls only async-signal-safe functions.
#include "profiling/worker/subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

extern char** environ;

namespace attn {

namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
    throw SpawnError(std::string("fcntl(O_NONBLOCK): ") + std::strerror(errno));
}

// The child's environment: the parent's, with `overrides` replacing or adding entries.
std::vector<std::string> child_environment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [key, value] : overrides) replaced = replaced || key == name;
    if (!replaced) env.push_back(entry);
  }
  for (const auto& [key, value] : overrides) {
    std::string entry = key;
    entry += '=';
    entry += value;
    env.push_back(std::move(entry));
  }
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (std::string& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

// Writes a literal to fd 2 from the forked child (async-signal-safe).
void child_say(const char* a, const char* b, const char* c) {
  for (const char* s : {a, b, c}) {
    if (!s) continue;
    const ssize_t n = ::write(2, s, std::strlen(s));
    (void)n;
  }
}

}  // namespace

ChildProcess ChildProcess::spawn(const SpawnSpec& spec) {
  std::vector<std::string> args = spec.argv;
  std::string path;
  if (args.empty()) {
    if (spec.shell_command.empty()) throw SpawnError("spawn: neither argv nor a shell command given");
    args = {"sh", "-c", spec.shell_command};
    path = "/bin/sh";
  } else {
    path = args.front();
  }
  std::vector<std::string> env = child_environment(spec.env);
  std::vector<char*> argv_p = pointers(args);
  std::vector<char*> env_p = pointers(env);

  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  auto close_all = [&] {
    for (int* p : {in, out, err}) {
      close_fd(p[0]);
      close_fd(p[1]);
    }
  };
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    close_all();
    throw SpawnError(std::string("pipe2: ") + std::strerror(e));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    close_all();
    throw SpawnError(std::string("fork: ") + std::strerror(e));
  }
  if (pid == 0) {
    // Child. dup2 clears O_CLOEXEC on the targets; every other pipe end closes at exec.
    if (::dup2(in[0], 0) < 0 || ::dup2(out[1], 1) < 0 || ::dup2(err[1], 2) < 0) ::_exit(127);
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the supervisor died before prctl took effect
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &dfl, nullptr);  // the supervisor ignores it; the command should not inherit that
    ::sigaction(SIGINT, &dfl, nullptr);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(path.c_str(), argv_p.data(), env_p.data());
    const int e = errno;
    child_say("attnscope: cannot execute ", path.c_str(), ": ");
    child_say(std::strerror(e), "\n", nullptr);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so kill_group() works even before the child ran
  ChildProcess c;
  c.m_pid = pid;
  c.m_in = in[1];
  c.m_out = out[0];
  c.m_err = err[0];
  close_fd(in[0]);
  close_fd(out[1]);
  close_fd(err[1]);
  set_nonblocking(c.m_out);
  set_nonblocking(c.m_err);
  return c;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : m_pid(std::exchange(other.m_pid, -1)),
      m_in(std::exchange(other.m_in, -1)),
      m_out(std::exchange(other.m_out, -1)),
      m_err(std::exchange(other.m_err, -1)),
      m_status(std::exchange(other.m_status, std::nullopt)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    release();
    m_pid = std::exchange(other.m_pid, -1);
    m_in = std::exchange(other.m_in, -1);
    m_out = std::exchange(other.m_out, -1);
    m_err = std::exchange(other.m_err, -1);
    m_status = std::exchange(other.m_status, std::nullopt);
  }
  return *this;
}

ChildProcess::~ChildProcess() { release(); }

void ChildProcess::release() {
  close_fd(m_in);
  close_fd(m_out);
  close_fd(m_err);
  if (m_pid > 0 && !m_status) {
    kill_group();
    int status = 0;
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  m_pid = -1;
  m_status.reset();
}

void ChildProcess::close_stdin() { close_fd(m_in); }
void ChildProcess::close_stdout() { close_fd(m_out); }
void ChildProcess::close_stderr() { close_fd(m_err); }

void ChildProcess::kill_group() {
  if (m_pid <= 0 || m_status) return;
  ::kill(-m_pid, SIGKILL);
  ::kill(m_pid, SIGKILL);
}

bool ChildProcess::try_reap() {
  if (m_status) return true;
  if (m_pid <= 0) return false;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(m_pid, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == m_pid) {
    m_status = status;
    // The child is gone, but a shell's grandchildren may linger in its group: end them too.
    ::kill(-m_pid, SIGKILL);
    return true;
  }
  return false;
}

void ChildProcess::finish(double grace_s) {
  const double until = monotonic_now() + grace_s;
  while (!try_reap() && monotonic_now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (!reaped()) {
    kill_group();
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(m_pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    if (r == m_pid) m_status = status;
  }
}

std::optional<int> ChildProcess::exit_code() const {
  if (m_status && WIFEXITED(*m_status)) return WEXITSTATUS(*m_status);
  return std::nullopt;
}

std::optional<int> ChildProcess::term_signal() const {
  if (m_status && WIFSIGNALED(*m_status)) return WTERMSIG(*m_status);
  return std::nullopt;
}

std::string ChildProcess::exit_description() const {
  if (const auto code = exit_code()) return "exited with code " + std::to_string(*code);
  if (const auto sig = term_signal()) return "killed by " + signal_name(*sig);
  return "still running";
}

std::string signal_name(int sig) {
  if (const char* abbrev = ::sigabbrev_np(sig)) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(sig);
}

double monotonic_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace attn
