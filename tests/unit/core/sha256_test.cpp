#include "shoal/core/sha256.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace shoal::core {
namespace {

// The test vectors of FIPS 180-4's examples and NIST's SHA-256 test suite.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecesAndFilesGiveTheWholeDigest) {
  const std::string text(200, 'x');
  Sha256 pieces;
  pieces.update(std::string_view(text).substr(0, 63));
  pieces.update(std::string_view(text).substr(63));
  EXPECT_EQ(pieces.hex(), sha256_hex(text));
  const std::string path = (std::filesystem::temp_directory_path() / "shoal-sha256-test").string();
  std::ofstream(path, std::ios::binary) << text;
  EXPECT_EQ(sha256_file(path), sha256_hex(text));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace shoal::core
