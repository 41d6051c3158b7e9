#include "shoal/core/files.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "shoal/core/error.hpp"

namespace shoal::core {
namespace {

namespace fs = std::filesystem;

/// A fresh folder per test, removed after it.
class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("shoal-files-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static void put(const std::string& p, const std::string& text) { std::ofstream(p) << text; }
  static std::string text_of(const std::string& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  template <class F>
  static std::string error_of(F f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  }
  fs::path dir_;
};

TEST_F(Files, InputMustBeAReadableFile) {
  put(path("a.toml"), "x = 1\n");
  EXPECT_NO_THROW(require_input_file(path("a.toml"), "config"));
  EXPECT_EQ(error_of([&] { require_input_file(path("none.toml"), "job"); }),
            "job " + path("none.toml") + ": no such file");
  EXPECT_EQ(error_of([&] { require_input_file(dir_.string(), "workload"); }),
            "workload " + dir_.string() + ": is a directory, not a file");
}

TEST_F(Files, NewOutputIsRefusedWhereItExistsUnlessForced) {
  EXPECT_NO_THROW(require_new_output(path("new.csv"), false, "-o"));
  put(path("old.csv"), "keep\n");
  EXPECT_EQ(error_of([&] { require_new_output(path("old.csv"), false, "-o"); }),
            "-o " + path("old.csv") + ": exists (use --force to overwrite it)");
  EXPECT_NO_THROW(require_new_output(path("old.csv"), true, "-o"));
  EXPECT_EQ(error_of([&] { require_new_output(dir_.string(), true, "-o"); }),
            "-o " + dir_.string() + ": is a directory");
  EXPECT_EQ(error_of([&] { require_new_output(path("no/x.h5"), false, "-o"); }),
            "-o " + path("no/x.h5") + ": folder " + path("no") + " does not exist");
  EXPECT_NO_THROW(require_new_output("-", false, "-o"));  // standard output
}

TEST_F(Files, WriteFileReplacesWholeAndLeavesNoPartial) {
  put(path("out.txt"), "old\n");
  write_file(path("out.txt"), "-o", [](std::ostream& out) { out << "new\n"; });
  EXPECT_EQ(text_of(path("out.txt")), "new\n");
  EXPECT_FALSE(fs::exists(path("out.txt.partial")));
}

TEST_F(Files, AFailedWriteLeavesTheOldFileAsItWas) {
  put(path("out.txt"), "old\n");
  EXPECT_THROW(write_file(path("out.txt"), "-o",
                          [](std::ostream& out) {
                            out << "half";
                            throw std::runtime_error("stopped");
                          }),
               std::runtime_error);
  EXPECT_EQ(text_of(path("out.txt")), "old\n");
  EXPECT_FALSE(fs::exists(path("out.txt.partial")));
}

/// Whether a child process (a POSIX lock belongs to its process) could take
/// the lock on `path`.
bool another_process_can_lock(const std::string& path) {
  const pid_t child = ::fork();
  if (child == 0) {
    const bool took = FileLock::try_lock(path).has_value();  // and released again
    ::_exit(took ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST_F(Files, ALockKeepsOtherProcessesOutUntilReleased) {
  const std::string lock = path("point.h5.lock");
  {
    std::optional<FileLock> mine = FileLock::try_lock(lock);
    ASSERT_TRUE(mine.has_value());
    EXPECT_FALSE(another_process_can_lock(lock));
    EXPECT_NE(FileLock::holder(lock).find(" pid " + std::to_string(::getpid()) + " since "),
              std::string::npos);
  }
  EXPECT_FALSE(fs::exists(lock));  // released and removed
  EXPECT_TRUE(another_process_can_lock(lock));
  EXPECT_FALSE(fs::exists(lock));  // the child's claim went with it
}

TEST_F(Files, LowerExtension) {
  EXPECT_EQ(lower_extension("runs/Y.H5"), ".h5");
  EXPECT_EQ(lower_extension("a.b/k.CsV"), ".csv");
  EXPECT_EQ(lower_extension("noext"), "");
}

}  // namespace
}  // namespace shoal::core
