#include "shoal/core/scratch_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "shoal/core/error.hpp"

namespace shoal::core {

namespace {

std::string failure(const std::string& what, const std::string& folder, const char* doing) {
  return what + " scratch file in " + folder + ": " + doing + " failed: " + std::strerror(errno);
}

}  // namespace

ScratchFile::ScratchFile(const std::string& folder, std::string what)
    : folder_(folder.empty() ? "." : folder), what_(std::move(what)) {
  std::string pattern = folder_ + "/.shoal-scratch-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0) throw Error(failure(what_, folder_, "creating it"));
  // Unnamed from now on: nothing is left behind, whatever ends the run.
  ::unlink(name.data());
}

ScratchFile::ScratchFile(ScratchFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      folder_(std::move(other.folder_)),
      what_(std::move(other.what_)),
      size_(std::exchange(other.size_, 0)) {}

ScratchFile& ScratchFile::operator=(ScratchFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    folder_ = std::move(other.folder_);
    what_ = std::move(other.what_);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

ScratchFile::~ScratchFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t ScratchFile::append(std::span<const std::byte> bytes) {
  const std::uint64_t at = size_;
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ::ssize_t n =
        ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<::off_t>(at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      throw Error(failure(what_, folder_, "writing"));
    }
    done += static_cast<std::size_t>(n);
  }
  size_ += bytes.size();
  return at;
}

void ScratchFile::read(std::uint64_t offset, std::span<std::byte> out) const {
  std::size_t done = 0;
  while (done < out.size()) {
    const ::ssize_t n =
        ::pread(fd_, out.data() + done, out.size() - done, static_cast<::off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;  // shorter than what was written: not ours to explain
      throw Error(failure(what_, folder_, "reading"));
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace shoal::core
