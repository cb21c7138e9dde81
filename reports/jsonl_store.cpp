// results.jsonl writer (POSIX fd: write + fsync per line) and reader (torn last line tolerated).
#include "reports/jsonl_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>
#include <utility>

namespace attn {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

[[noreturn]] void io_fail(const fs::path& file, std::string_view what, int err) {
  throw ResultsIoError(file.string() + ": " + std::string(what) + ": " + std::strerror(err));
}

// One line of JSON; invalid UTF-8 in free text (an exception message) is replaced, not fatal.
std::string dump_line(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

void write_all(int fd, const fs::path& file, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      io_fail(file, "write", errno);
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

void sync_fd(int fd, const fs::path& file) {
  if (::fsync(fd) != 0) io_fail(file, "fsync", errno);
}

// Makes the new directory entry durable too; best effort (some filesystems refuse fsync on dirs).
void sync_dir(const fs::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

std::string read_text(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) io_fail(file, "cannot open for reading", errno);
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      io_fail(file, "read", err);
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

struct Parsed {
  LoadedRun loaded;
  std::size_t good_end = 0;     // byte offset just past the last accepted line (its '\n' included)
  bool last_terminated = true;  // the last accepted line ends with '\n'
};

Parsed parse_results(const fs::path& file, const std::string& text) {
  Parsed out;
  std::vector<std::pair<std::size_t, std::size_t>> lines;  // [begin, end) without the '\n'
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = text.find('\n', pos);
    const std::size_t end = nl == std::string::npos ? text.size() : nl;
    lines.emplace_back(pos, end);
    pos = nl == std::string::npos ? text.size() : nl + 1;
  }
  std::size_t last_nonblank = lines.size();
  for (std::size_t i = lines.size(); i-- > 0;) {
    if (!blank(std::string_view(text).substr(lines[i].first, lines[i].second - lines[i].first))) {
      last_nonblank = i;
      break;
    }
  }
  bool have_run = false;
  std::unordered_map<std::string, std::size_t> first_line;  // case_id -> its first line [1-based]
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto [begin, end] = lines[i];
    const std::string_view line = std::string_view(text).substr(begin, end - begin);
    if (blank(line)) continue;
    const std::string where = file.string() + ":" + std::to_string(i + 1);
    json j;
    try {
      j = json::parse(line);
    } catch (const json::parse_error& e) {
      if (i == last_nonblank && have_run) {
        out.loaded.warnings.push_back(where + ": ignored an unparsable last line (" +
                                      std::to_string(line.size()) +
                                      " bytes; a writer killed mid-line leaves one): " + e.what());
        break;
      }
      throw ResultsFormatError(where + ": not valid JSON: " + e.what());
    }
    try {
      if (!have_run) {
        out.loaded.run = run_info_from_json(j);
        have_run = true;
      } else {
        CaseResult c = case_result_from_json(j);
        // A size no plan can hold (seq_q -5, head_dim 0) means the line was not written by a run:
        // skipping it keeps reports sane and lets --resume run that case again.
        if (const std::string bad = c.problem.validate_sizes(); !bad.empty()) {
          out.loaded.warnings.push_back(where + ": case " + c.case_id + " (" + c.kernel + ") has problem." +
                                        bad + "; line skipped");
          out.good_end = end < text.size() ? end + 1 : end;
          out.last_terminated = end < text.size();
          continue;
        }
        const auto [it, inserted] = first_line.emplace(c.case_id, i + 1);
        if (inserted) {
          out.loaded.cases.push_back(std::move(c));
          out.loaded.case_lines.push_back(i + 1);
        } else {
          out.loaded.warnings.push_back(where + ": case " + c.case_id + " (" + c.kernel + ") repeats line " +
                                        std::to_string(it->second) + "; dropped, the first record is kept");
        }
      }
    } catch (const ResultsFormatError& e) {
      throw ResultsFormatError(where + ": " + e.what());
    }
    out.good_end = end < text.size() ? end + 1 : end;
    out.last_terminated = end < text.size();
  }
  if (!have_run) throw ResultsFormatError(file.string() + ": no run record (the file is empty)");
  return out;
}

}  // namespace

JsonlWriter JsonlWriter::create(const fs::path& file, const RunInfo& run, bool force) {
  const fs::path parent = file.parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) throw ResultsIoError(parent.string() + ": cannot create directory: " + ec.message());
  }
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL);
  const int fd = ::open(file.c_str(), flags, 0644);
  if (fd < 0) {
    if (errno == EEXIST)
      throw ResultsExistError(file.string() +
                              ": results file already exists; pass --force to overwrite it, or choose "
                              "a new --out");
    io_fail(file, "cannot create", errno);
  }
  JsonlWriter w(file, fd);
  w.write_line(dump_line(to_json(run)));
  sync_dir(parent);
  return w;
}

JsonlWriter JsonlWriter::resume(const fs::path& file, LoadedRun& loaded) {
  const std::string text = read_text(file);
  Parsed parsed = parse_results(file, text);
  const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) io_fail(file, "cannot open for appending", errno);
  JsonlWriter w(file, fd);
  // Drop the torn tail so the next line starts on a fresh line.
  if (::ftruncate(fd, static_cast<off_t>(parsed.good_end)) != 0) io_fail(file, "ftruncate", errno);
  if (::lseek(fd, 0, SEEK_END) < 0) io_fail(file, "lseek", errno);
  if (!parsed.last_terminated) write_all(fd, file, "\n");
  sync_fd(fd, file);
  loaded = std::move(parsed.loaded);
  return w;
}

JsonlWriter::JsonlWriter(JsonlWriter&& other) noexcept
    : m_path(std::move(other.m_path)), m_fd(std::exchange(other.m_fd, -1)), m_lines(other.m_lines) {}

JsonlWriter& JsonlWriter::operator=(JsonlWriter&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_path = std::move(other.m_path);
    m_fd = std::exchange(other.m_fd, -1);
    m_lines = other.m_lines;
  }
  return *this;
}

JsonlWriter::~JsonlWriter() {
  if (m_fd >= 0) ::close(m_fd);
}

void JsonlWriter::close() {
  if (m_fd < 0) return;
  const int fd = std::exchange(m_fd, -1);
  if (::close(fd) != 0) io_fail(m_path, "close", errno);
}

void JsonlWriter::append(const CaseResult& result) { write_line(dump_line(to_json(result))); }

void JsonlWriter::write_line(const std::string& line) {
  if (m_fd < 0) throw ResultsIoError(m_path.string() + ": append after close (or after a failed write)");
  try {
    write_all(m_fd, m_path, line);
    sync_fd(m_fd, m_path);
  } catch (const ResultsIoError&) {
    // A partial line may be on disk: writing more after it would turn it into a corrupt middle
    // line, so the writer stops here and the reader drops the torn tail with a warning.
    ::close(std::exchange(m_fd, -1));
    throw;
  }
  ++m_lines;
}

LoadedRun read_results(const fs::path& file) { return parse_results(file, read_text(file)).loaded; }

}  // namespace attn

namespace attn {

void rewrite_run_record(const fs::path& file, const RunInfo& run) {
  const std::string text = read_text(file);
  std::size_t begin = 0;
  while (begin < text.size()) {  // skip blank lines before the run record
    const std::size_t nl = text.find('\n', begin);
    const std::size_t end = nl == std::string::npos ? text.size() : nl;
    if (!blank(std::string_view(text).substr(begin, end - begin))) break;
    begin = nl == std::string::npos ? text.size() : nl + 1;
  }
  const std::size_t nl = text.find('\n', begin);
  if (begin >= text.size() || nl == std::string::npos)
    throw ResultsIoError(file.string() + ": no complete run record to rewrite");
  (void)run_info_from_json(json::parse(text.substr(begin, nl - begin)));  // it is a run record
  const fs::path tmp = file.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) io_fail(tmp, "cannot create", errno);
  try {
    write_all(fd, tmp, dump_line(to_json(run)));
    write_all(fd, tmp, std::string_view(text).substr(nl + 1));
    sync_fd(fd, tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    io_fail(file, "rename", err);
  }
  sync_dir(file.parent_path());
}

}  // namespace attn
