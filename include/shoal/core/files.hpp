// Files a run reads and writes, checked before any work: an input that is a
// folder or missing, or an output that would overwrite a file or cannot be
// created, is one line naming the path, not a parser's message or a lost file.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

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

}  // namespace shoal::core
