// Sweep files (shoal::config::parse_sweep): parsing, the checks of [sweep], [set]
// and [axes], then every point's name and overrides for sweeps of up to 4,096
// points (larger ones: the first and the last).
#include "shoal/config/sweep_file.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = shoal::fuzz::text(data, size);
  if (shoal::fuzz::hits_toml_unicode_bug(text)) return -1;  // not ours
  shoal::fuzz::expect_only_errors([&] {
    const shoal::config::Sweep sweep = shoal::config::parse_sweep(text, "fuzz/sweep.toml");
    const std::size_t n = sweep.size();
    if (n == 0 || n > shoal::config::kMaxSweepPoints) __builtin_trap();  // parse_sweep's guarantee
    const auto visit = [&](std::size_t i) {
      const shoal::config::SweepPoint p = sweep.point(i);
      if (p.index != i || p.name.empty() ||
          p.overrides.size() != sweep.fixed.size() + sweep.axes.size()) {
        __builtin_trap();
      }
    };
    if (n <= 4096) {
      for (std::size_t i = 0; i < n; ++i) visit(i);
    } else {
      visit(0);
      visit(n - 1);
    }
    sweep.results_folder();
  });
  return 0;
}
