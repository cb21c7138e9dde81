// A child process with its stdin, stdout and stderr on pipes: how the supervisor starts workers,
// either `attnscope worker` itself or any shell command that runs one elsewhere (ssh, srun).
#pragma once
#include <sys/types.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace attn {

class SpawnError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SpawnSpec {
  std::vector<std::string> argv;  // executed directly when non-empty (argv[0] is a path)
  std::string shell_command;      // otherwise run by /bin/sh -c
  std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing in) the environment
};

// The child runs in its own process group (a terminal's Ctrl-C reaches the supervisor only, which
// decides what happens to workers) and receives SIGKILL if the supervisor dies (PR_SET_PDEATHSIG),
// so a SIGKILLed run leaves no orphan spinning on a GPU.
class ChildProcess {
 public:
  // Throws SpawnError when pipes or fork fail; a command that cannot be executed starts anyway and
  // exits with code 127 after saying why on its stderr.
  static ChildProcess spawn(const SpawnSpec& spec);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // Kills (SIGKILL, whole group) and reaps a child still running.
  ~ChildProcess();

  pid_t pid() const { return m_pid; }
  int stdin_fd() const { return m_in; }
  int stdout_fd() const { return m_out; }  // non-blocking
  int stderr_fd() const { return m_err; }  // non-blocking
  void close_stdin();
  void close_stdout();
  void close_stderr();

  // SIGKILL to the child's process group (a shell's children included). No-op once reaped.
  void kill_group();
  // Reaps the child if it has exited; true once reaped.
  bool try_reap();
  // Waits up to `grace_s` [s] for the child to exit, then kills its group and reaps it.
  void finish(double grace_s);
  bool reaped() const { return m_status.has_value(); }
  // After reaping: "exited with code 3", "killed by SIGABRT".
  std::string exit_description() const;
  std::optional<int> exit_code() const;
  std::optional<int> term_signal() const;

 private:
  ChildProcess() = default;
  void release();

  pid_t m_pid = -1;
  int m_in = -1, m_out = -1, m_err = -1;
  std::optional<int> m_status;  // waitpid status once reaped
};

// "SIGSEGV" for 11, "signal 77" for names this libc does not know.
std::string signal_name(int sig);

// [s] a monotonic clock shared by the supervisor's deadlines.
double monotonic_now();

}  // namespace attn
