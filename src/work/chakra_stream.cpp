#include "chakra_stream.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <ostream>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/util/delimited_message_util.h>

#include "shoal/core/error.hpp"

namespace shoal::work::chakra {

namespace {

/// No Chakra message Shoal reads comes near this; a length above it is a
/// corrupt length prefix, refused before anything is allocated for it.
constexpr std::uint32_t kMaxMessageBytes = 256u << 20;

}  // namespace

TraceReader::TraceReader(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail(std::string("cannot open it (") + std::strerror(errno) + ")");
  stream_.emplace(fd_);
}

TraceReader::~TraceReader() {
  stream_.reset();
  if (fd_ >= 0) ::close(fd_);
}

void TraceReader::fail(const std::string& what) const {
  throw Error("chakra trace " + path_ + ": " + what);
}

bool TraceReader::next_message(std::string& bytes, std::string_view what) {
  // A coded stream per message, as protobuf's own delimited reader does: each
  // has a 2 GiB limit, which a whole trace may pass.
  google::protobuf::io::CodedInputStream in(&*stream_);
  const void* data = nullptr;
  int available = 0;
  if (!in.GetDirectBufferPointer(&data, &available)) {
    if (stream_->GetErrno() != 0)
      fail(std::string("read error: ") + std::strerror(stream_->GetErrno()));
    return false;  // nothing left: the end of the file, between messages
  }
  ++messages_;
  const std::string where =
      "message " + std::to_string(messages_) + " (" + std::string(what) +
      (last_node_ ? ", after node " + std::to_string(*last_node_) : std::string()) + ")";
  std::uint32_t size = 0;
  if (!in.ReadVarint32(&size)) fail(where + " is cut short: the file ends inside its length");
  if (size > kMaxMessageBytes) {
    fail(where + " claims " + std::to_string(size) + " bytes, more than " +
         std::to_string(kMaxMessageBytes) + ": not a Chakra trace, or a corrupt one");
  }
  if (!in.ReadString(&bytes, static_cast<int>(size))) {
    fail(where + " is cut short: its length says " + std::to_string(size) +
         " bytes, but the file ends first");
  }
  return true;
}

chakra_et::GlobalMetadata TraceReader::read_metadata() {
  std::string bytes;
  if (!next_message(bytes, "the GlobalMetadata")) {
    fail("the file is empty (a trace starts with its GlobalMetadata)");
  }
  chakra_et::GlobalMetadata metadata;
  if (!metadata.ParseFromString(bytes)) {
    fail("message 1 is not a GlobalMetadata (is this a Chakra trace?)");
  }
  return metadata;
}

bool TraceReader::next(chakra_et::Node& node) {
  std::string bytes;
  if (!next_message(bytes, "a node")) return false;
  if (!node.ParseFromString(bytes)) {
    fail("message " + std::to_string(messages_) + " (a node" +
         (last_node_ ? ", after node " + std::to_string(*last_node_) : std::string()) +
         ") does not parse as a Chakra node");
  }
  last_node_ = node.id();
  return true;
}

void write_delimited(std::ostream& out, const google::protobuf::MessageLite& message) {
  if (!google::protobuf::util::SerializeDelimitedToOstream(message, &out)) {
    throw Error("cannot write a Chakra message");
  }
}

std::optional<std::int64_t> integer_value(const chakra_et::AttributeProto& attr) {
  using A = chakra_et::AttributeProto;
  auto unsigned_value = [](std::uint64_t v) -> std::optional<std::int64_t> {
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(v);
  };
  switch (attr.value_case()) {
    case A::kInt32Val:
      return attr.int32_val();
    case A::kInt64Val:
      return attr.int64_val();
    case A::kUint32Val:
      return attr.uint32_val();
    case A::kUint64Val:
      return unsigned_value(attr.uint64_val());
    case A::kSint32Val:
      return attr.sint32_val();
    case A::kSint64Val:
      return attr.sint64_val();
    case A::kFixed32Val:
      return attr.fixed32_val();
    case A::kFixed64Val:
      return unsigned_value(attr.fixed64_val());
    case A::kSfixed32Val:
      return attr.sfixed32_val();
    case A::kSfixed64Val:
      return attr.sfixed64_val();
    default:
      return std::nullopt;
  }
}

}  // namespace shoal::work::chakra
