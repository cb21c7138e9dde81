// Line splitting and whole reads/writes on pipe file descriptors (see pipe_io.hpp).
#include "profiling/worker/pipe_io.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace attn {

std::optional<std::string> LineSplitter::next() {
  const std::size_t nl = m_buffer.find('\n', m_pos);
  std::size_t end = nl;
  std::size_t skip = 1;
  if (nl == std::string::npos) {
    if (m_buffer.size() - m_pos < kMaxLine) return std::nullopt;
    end = m_pos + kMaxLine;
    skip = 0;
  }
  std::string line = m_buffer.substr(m_pos, end - m_pos);
  m_pos = end + skip;
  // Compact once the consumed prefix dominates, so a long stream of lines costs O(bytes).
  if (m_pos > 4096 && m_pos * 2 > m_buffer.size()) {
    m_buffer.erase(0, m_pos);
    m_pos = 0;
  }
  return line;
}

std::string LineSplitter::take_rest() {
  std::string rest = m_buffer.substr(m_pos);
  m_buffer.clear();
  m_pos = 0;
  return rest;
}

void write_all(int fd, std::string_view data, const char* what) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      throw PipeError(std::string(what) + ": write: " + std::strerror(err), err == EPIPE);
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

bool read_some(int fd, LineSplitter& lines, const char* what) {
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      lines.feed(std::string_view(buf, static_cast<std::size_t>(n)));
      return true;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    const int err = errno;
    throw PipeError(std::string(what) + ": read: " + std::strerror(err), false);
  }
}

std::optional<std::string> read_line(int fd, LineSplitter& lines, const char* what) {
  for (;;) {
    if (auto line = lines.next()) return line;
    if (!read_some(fd, lines, what)) {
      std::string rest = lines.take_rest();
      if (rest.empty()) return std::nullopt;
      return rest;
    }
  }
}

}  // namespace attn
