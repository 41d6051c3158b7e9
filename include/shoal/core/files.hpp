// Files a run reads and writes, checked before any work: an input that is a
// folder or missing, or an output that would overwrite a file or cannot be
// created, is one line naming the path, not a parser's message or a lost file.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace shoal::core {

/// Throws an Error "WHAT PATH: ..." unless `path` is a regular file that can
/// be opened for reading (not a folder, not missing).
void require_input_file(const std::string& path, std::string_view what);

/// Throws an Error "WHAT PATH: ..." unless `path` can be written as a new
/// file: its folder exists and is writable, the path is not a folder, and it
/// does not exist unless `force`.
void require_new_output(const std::string& path, bool force, std::string_view what);

/// Writes `path` through `path.partial`, renamed over `path` once `write` has
/// finished and the stream is flushed, so a failed write leaves any old file
/// whole. "-" writes to standard output.
void write_file(const std::string& path, std::string_view what,
                const std::function<void(std::ostream&)>& write);

/// The lower-case extension of `path`, with its dot (".h5"; "" if none).
std::string lower_extension(const std::string& path);

/// An exclusive claim on a lock file, held while the object lives: a POSIX
/// record lock, which NFS and Lustre honour across nodes and the kernel drops
/// when its process dies, so a killed run leaves no stale claim behind.
class FileLock {
 public:
  /// The lock on `path` (created if missing), or nullopt where another
  /// process holds it. The file records who holds it (host, pid, start).
  static std::optional<FileLock> try_lock(const std::string& path);
  /// Whether another process holds `path` now. Never call it in the process
  /// that holds the lock: closing any descriptor of the file drops a POSIX lock.
  static bool held(const std::string& path);
  /// The holder's record in `path` ("" if unreadable).
  static std::string holder(const std::string& path);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  /// Removes the file and releases the lock.
  ~FileLock();

 private:
  FileLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  void release();
  int fd_ = -1;
  std::string path_;
};

}  // namespace shoal::core
