#include "shoal/core/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
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

std::optional<FileLock> FileLock::try_lock(const std::string& path) {
  for (;;) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("lock " + path + ": cannot be created: " + std::strerror(errno));
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    if (::fcntl(fd, F_SETLK, &lock) != 0) {
      ::close(fd);
      if (errno == EACCES || errno == EAGAIN) return std::nullopt;
      throw Error("lock " + path + ": cannot be taken: " + std::strerror(errno));
    }
    // The holder before us may have removed the file between our open and our
    // lock: then we hold a lock on a file no one else will see; take it anew.
    struct stat opened {};
    struct stat named {};
    if (::fstat(fd, &opened) == 0 && ::stat(path.c_str(), &named) == 0 &&
        opened.st_dev == named.st_dev && opened.st_ino == named.st_ino) {
      char host[256] = {};
      ::gethostname(host, sizeof host - 1);
      const std::string record = std::string(host) + " pid " + std::to_string(::getpid()) +
                                 " since " + std::to_string(std::time(nullptr)) + "\n";
      if (::ftruncate(fd, 0) != 0 || ::write(fd, record.data(), record.size()) < 0) {
        // The record is for people reading the file; the lock holds without it.
      }
      return FileLock(fd, path);
    }
    ::close(fd);
  }
}

bool FileLock::held(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  const bool busy = ::fcntl(fd, F_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
  ::close(fd);
  return busy;
}

std::string FileLock::holder(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

FileLock::FileLock(FileLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

FileLock::~FileLock() { release(); }

void FileLock::release() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // before the lock goes: a waiter then retries on a new file
  ::close(fd_);
  fd_ = -1;
}

std::string lower_extension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

}  // namespace shoal::core
