// A sweep file: a base run config plus axes of config values, expanded into a
// list of points (one simulation each) with stable names. `shoal sweep` lists
// and runs the points; slurm/ submits them as job arrays (docs/sweeps.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shoal::config {

/// One swept key: "table.key" and its values as TOML literals ("1024",
/// "\"100Gbps\"", "[\"fair\", \"lina\"]") with the short labels used in names.
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
  std::vector<std::string> labels;
};

/// One point of the sweep: its index in the expansion, its stable name (a file
/// name stem) and the overrides ("table.key=value", as `shoal run --set`) that
/// turn the base config into it.
struct SweepPoint {
  std::size_t index = 0;
  std::string name;
  std::vector<std::string> overrides;
};

struct Sweep {
  std::string path;                // the sweep file
  std::string base;                // the base run config, resolved against the sweep file's folder
  std::string results;             // folder of the points' HDF5 files ("" = results/<file stem>)
  std::optional<int> ranks;        // [sweep] ranks: the same for every point
  std::int64_t gpus_per_rank = 0;  // [sweep] gpus_per_rank: ranks = ceil(gpus / this)
  int max_ranks = 0;               // [sweep] max_ranks: cap on the suggestion (0: none)
  std::vector<std::string> fixed;  // [set]: overrides applied to every point
  std::vector<SweepAxis> axes;     // [axes], in the order the file lists them

  /// Number of points: the product of the axes' lengths (1 without axes).
  std::size_t size() const;
  /// Point i: the first axis varies slowest, the last fastest.
  SweepPoint point(std::size_t index) const;
  /// The results folder to use: `results` or results/<file stem>.
  std::string results_folder() const;
};

/// The most points one sweep may expand to (a guard against a typo'd range).
inline constexpr std::size_t kMaxSweepPoints = 100000;

/// Reads and checks a sweep file; an Error names the file, the line and the key.
Sweep read_sweep_file(const std::string& path);
/// The same from text; `path` names it in errors and anchors relative paths.
Sweep parse_sweep(std::string_view text, const std::string& path);

}  // namespace shoal::config
