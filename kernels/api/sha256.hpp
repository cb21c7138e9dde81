// SHA-256 of a file, for records that must name the exact binary a result came from.
#pragma once
#include <filesystem>
#include <string>

namespace attn {

// Lower-case hex digest of the file's bytes; throws std::runtime_error naming the file when it
// cannot be read.
std::string sha256_file(const std::filesystem::path& file);
// Lower-case hex digest of `data`.
std::string sha256_hex(const std::string& data);

}  // namespace attn
