// Line-oriented I/O on pipes for the worker protocol: a splitter that turns arbitrary reads into
// whole lines, and EINTR-safe whole writes that report a closed reader instead of dying of SIGPIPE.
#pragma once
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace attn {

// The other end of a pipe is gone (EPIPE), or a read or write failed; the message names the call.
class PipeError : public std::runtime_error {
 public:
  PipeError(const std::string& what, bool closed) : std::runtime_error(what), m_closed(closed) {}
  bool peer_closed() const { return m_closed; }

 private:
  bool m_closed;
};

// Accumulates bytes and hands out complete lines ('\n' removed, a trailing '\r' kept as is).
class LineSplitter {
 public:
  // [bytes] a longer unterminated line is handed out in pieces of this size, so a peer that never
  // writes '\n' cannot grow the buffer without bound.
  static constexpr std::size_t kMaxLine = std::size_t{64} << 20;

  void feed(std::string_view bytes) { m_buffer.append(bytes); }
  // The next complete line, or nullopt when none is buffered.
  std::optional<std::string> next();
  // Bytes after the last '\n' (a torn last line once the writer has gone); clears them.
  std::string take_rest();
  bool empty() const { return m_buffer.size() == m_pos; }

 private:
  std::string m_buffer;
  std::size_t m_pos = 0;  // start of the unconsumed part
};

// Writes all of `data` to `fd`, retrying short writes and EINTR. Throws PipeError (peer_closed()
// on EPIPE). The caller ignores SIGPIPE (the supervisor does while it runs; the worker always).
void write_all(int fd, std::string_view data, const char* what);

// Reads once from `fd` into `lines` (blocking unless fd is non-blocking). Returns false at end of
// file, true otherwise (also when a non-blocking fd had nothing). Throws PipeError on errors.
bool read_some(int fd, LineSplitter& lines, const char* what);

// Blocks until a whole line is available on `fd` and returns it; nullopt at end of file (a torn
// unterminated last line is returned as a line).
std::optional<std::string> read_line(int fd, LineSplitter& lines, const char* what);

}  // namespace attn
