// A TOML config file read key by key, with units, and strict about mistakes:
// every error is one line naming the file, the line and the key; keys that no
// reader asked for are errors too (a typo must not be silently ignored).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/config/input_file.hpp"
#include "shoal/core/units.hpp"

namespace shoal::config {

class ConfigFile {
 public:
  /// Parses the file; a syntax error is an Error with its line and column.
  /// `overrides` ("table.key=value", as from --set) replace or add keys; a value
  /// that is not a TOML literal (64KiB, fat-tree) is taken as a string.
  /// Messages name the file `shown_as` where given (a rerun's copy of a config).
  explicit ConfigFile(const std::string& path, const std::vector<std::string>& overrides = {},
                      const std::string& shown_as = {});
  ~ConfigFile();
  ConfigFile(ConfigFile&&) noexcept;
  ConfigFile& operator=(ConfigFile&&) noexcept;

  /// The file as messages name it.
  const std::string& path() const { return path_; }
  /// The file as it was read.
  const std::string& text() const { return text_; }

  /// The file that a key's value `name` names (`role`: "job", "workload"...):
  /// relative to the config's folder unless absolute, or where map_inputs()
  /// put it. Every file resolved here is listed by inputs().
  std::string input(std::string_view role, const std::string& name);
  /// The same for a name another file spelled, relative to `folder`.
  std::string input(std::string_view role, const std::string& name, const std::string& folder);
  /// Where input() would find `name` (relative to `folder`, by default the
  /// config's), without listing it: to test which of several candidate files
  /// exist (a Chakra trace's rank files).
  std::string locate(const std::string& name, const std::string& folder = {}) const;
  const std::vector<InputFile>& inputs() const { return inputs_; }
  /// Reads the files named `name` (as the config spells it) from other paths:
  /// `shoal rerun` gives the copies it took from an output's /meta.
  void map_inputs(std::map<std::string, std::string> name_to_path) {
    input_map_ = std::move(name_to_path);
  }

  /// The whole config as TOML, --set overrides applied.
  std::string resolved_text() const;

  /// Declares a table that may appear; its keys are checked by reject_unknown().
  /// Each getter returns nothing when the key is absent and throws Error when the
  /// value has the wrong type or an impossible unit.
  std::optional<std::int64_t> integer(std::string_view table, std::string_view key);
  std::optional<double> number(std::string_view table, std::string_view key);
  std::optional<bool> boolean(std::string_view table, std::string_view key);
  std::optional<std::string> string(std::string_view table, std::string_view key);
  std::optional<std::vector<std::string>> strings(std::string_view table, std::string_view key);
  std::optional<std::vector<std::int64_t>> integers(std::string_view table, std::string_view key);
  std::optional<Time> time(std::string_view table, std::string_view key);
  std::optional<Bytes> bytes(std::string_view table, std::string_view key);
  std::optional<BitsPerSecond> rate(std::string_view table, std::string_view key);
  /// Whether the key holds an integer (for a key that takes a number or a
  /// name, read then with integer() or string()).
  bool holds_integer(std::string_view table, std::string_view key);

  /// Number of [[array]] entries (0 when absent). The getters read entry i of it
  /// with the table name "array[i]".
  std::size_t entries(std::string_view array);

  /// Throws an Error naming the first key (or table) that no getter asked for.
  void reject_unknown() const;
  /// The same, for the keys of one table only (other tables may be read later).
  void reject_unknown(std::string_view table) const;

  struct Impl;  // the parsed document; opaque outside config_file.cpp

 private:
  std::string path_;    // as messages name it
  std::string folder_;  // where relative input files are found
  std::string text_;
  std::unique_ptr<Impl> impl_;
  std::vector<InputFile> inputs_;
  std::map<std::string, std::string> input_map_;
};

}  // namespace shoal::config
