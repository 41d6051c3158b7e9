#include "shoal/config/input_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "shoal/core/error.hpp"
#include "shoal/core/sha256.hpp"

namespace shoal::config {

std::vector<InputSnapshot> snapshot_inputs(const std::vector<InputFile>& files,
                                           std::uint64_t embed_limit) {
  std::vector<InputSnapshot> out;
  for (const InputFile& file : files) {
    bool seen = false;
    for (const InputSnapshot& s : out) seen = seen || s.file.path == file.path;
    if (seen) continue;
    InputSnapshot s;
    s.file = file;
    std::error_code ec;
    s.bytes = std::filesystem::file_size(file.path, ec);
    if (ec) throw Error(file.role + " " + file.path + ": " + ec.message());
    if (s.bytes <= embed_limit) {
      std::ifstream in(file.path, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      if (!in) throw Error(file.role + " " + file.path + ": cannot be read");
      s.contents = std::move(text).str();
      s.bytes = s.contents.size();
      s.sha256 = core::sha256_hex(s.contents);
      s.embedded = true;
    } else {
      s.sha256 = core::sha256_file(file.path);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace shoal::config
