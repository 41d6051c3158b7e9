// Chakra's file layout, private to the work layer: a stream of protobuf
// messages, each after its length as a varint, a GlobalMetadata first and then
// Nodes; and the attributes a node carries, read whatever integer type their
// writer chose.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "chakra_et.pb.h"

namespace shoal::work::chakra {

/// Reads one trace file message by message. Every problem is an Error naming
/// the file (and the last node read, for a message that is cut short or does
/// not parse).
class TraceReader {
 public:
  explicit TraceReader(std::string path);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  /// The GlobalMetadata that opens the file.
  chakra_et::GlobalMetadata read_metadata();
  /// The next node into `node`; false at the end of the file.
  bool next(chakra_et::Node& node);
  const std::string& path() const { return path_; }

 private:
  /// The next message's bytes; false at a clean end of the file.
  bool next_message(std::string& bytes, std::string_view what);
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  int fd_ = -1;
  std::optional<google::protobuf::io::FileInputStream> stream_;
  std::uint64_t messages_ = 0;
  std::optional<std::uint64_t> last_node_;
};

/// Writes `message` with its length before it; an Error when the stream fails.
void write_delimited(std::ostream& out, const google::protobuf::MessageLite& message);

/// An attribute's integer value, whatever integer type it was written as
/// (ASTRA-sim's own traces use int64 and uint64 alike); nullopt for any other
/// type. A uint64 above INT64_MAX is nullopt too: no count Shoal reads is that
/// large.
std::optional<std::int64_t> integer_value(const chakra_et::AttributeProto& attr);

}  // namespace shoal::work::chakra
