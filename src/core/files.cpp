#include "shoal/core/files.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "shoal/core/error.hpp"

namespace shoal::core {

namespace fs = std::filesystem;

namespace {

std::string named(std::string_view what, const std::string& path) {
  return std::string(what) + " " + path + ": ";
}

}  // namespace

void require_input_file(const std::string& path, std::string_view what) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) throw Error(named(what, path) + "no such file");
  if (fs::is_directory(status)) throw Error(named(what, path) + "is a directory, not a file");
  if (::access(path.c_str(), R_OK) != 0) throw Error(named(what, path) + "cannot be read");
}

void require_new_output(const std::string& path, bool force, std::string_view what) {
  if (path == "-") return;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::is_directory(status)) throw Error(named(what, path) + "is a directory");
  if (fs::exists(status) && !force) {
    throw Error(named(what, path) + "exists (use --force to overwrite it)");
  }
  const fs::path parent = fs::path(path).parent_path();
  const fs::path folder = parent.empty() ? fs::path(".") : parent;
  if (!fs::is_directory(folder, ec)) {
    throw Error(named(what, path) + "folder " + folder.string() + " does not exist");
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    throw Error(named(what, path) + "folder " + folder.string() + " is not writable");
  }
}

void write_file(const std::string& path, std::string_view what,
                const std::function<void(std::ostream&)>& write) {
  if (path == "-") {
    write(std::cout);
    std::cout.flush();
    return;
  }
  const std::string partial = path + ".partial";
  try {
    std::ofstream out(partial);
    if (!out) throw Error(named(what, partial) + "cannot be created");
    write(out);
    out.close();
    if (!out) throw Error(named(what, partial) + "writing failed");
  } catch (...) {
    std::error_code ignored;
    fs::remove(partial, ignored);  // half a file helps no one
    throw;
  }
  std::error_code ec;
  fs::rename(partial, path, ec);
  if (ec) throw Error(named(what, path) + "cannot rename the finished file: " + ec.message());
}

std::string lower_extension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

}  // namespace shoal::core
