#include "shoal/work/sequence_lengths.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <numbers>
#include <string_view>

#include "shoal/core/error.hpp"
#include "shoal/core/random.hpp"

namespace shoal::work {

std::vector<std::uint64_t> read_sequence_lengths(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("sequence lengths " + path + ": cannot be read");
  std::vector<std::uint64_t> lengths;
  std::string line;
  for (std::uint64_t number = 1; std::getline(in, line); ++number) {
    std::string_view v(line);
    v = v.substr(0, v.find('#'));
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) {
      v.remove_suffix(1);
    }
    if (v.empty()) continue;
    std::uint64_t length = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), length);
    if (ec != std::errc() || end != v.data() + v.size() || length == 0) {
      throw Error("sequence lengths " + path + ":" + std::to_string(number) + ": \"" +
                  std::string(v) + "\" is not a positive integer length");
    }
    lengths.push_back(length);
  }
  if (lengths.empty()) throw Error("sequence lengths " + path + ": the file holds no length");
  return lengths;
}

namespace {

/// One length of the law from `rng`, at least 1.
std::uint64_t draw(const SequenceSpec& spec, core::Rng& rng) {
  if (spec.law == LengthLaw::kUniform) return spec.min + rng.below(spec.max - spec.min + 1);
  // Log-normal by Box-Muller: exp(mu + sigma z), z standard normal.
  const double u1 = 1.0 - rng.uniform();  // (0, 1]
  const double u2 = rng.uniform();
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  const double x = std::exp(spec.mu + spec.sigma * z);
  // Longer than any micro-batch holds is cut anyway; 2^62 keeps the cast defined.
  if (!(x < 4.6e18)) return std::uint64_t{1} << 62;
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(x)));
}

}  // namespace

SequencePacking::SequencePacking(const SequenceSpec& spec, std::uint64_t tokens,
                                 std::uint32_t iterations, std::uint32_t micro_batches,
                                 std::uint32_t replicas, std::uint64_t job,
                                 const std::vector<std::uint64_t>& lengths)
    : micro_batches_(micro_batches), replicas_(replicas) {
  sums_.reserve(std::size_t{iterations} * micro_batches * replicas);
  std::size_t cursor = 0;  // the file's next length, in (iteration, micro-batch, replica) order
  for (std::uint32_t it = 0; it < iterations; ++it) {
    for (std::uint32_t mb = 0; mb < micro_batches; ++mb) {
      for (std::uint32_t x = 0; x < replicas; ++x) {
        // One stream per (job, iteration, micro-batch, replica): the same on every rank,
        // whatever order the DAG is built in.
        core::Rng rng(spec.seed,
                      core::mix64(core::mix64(core::mix64(job) ^ it) ^ mb) ^ (x + 0x5E9ULL));
        double sum = 0;
        for (std::uint64_t left = tokens; left > 0;) {
          std::uint64_t length = 0;
          if (spec.law == LengthLaw::kFile) {
            length = lengths[cursor];
            cursor = (cursor + 1) % lengths.size();
          } else {
            length = draw(spec, rng);
          }
          length = std::min(length, left);  // the last sequence cut to fit
          sum += static_cast<double>(length) * static_cast<double>(length);
          left -= length;
        }
        sums_.push_back(sum);
      }
    }
  }
}

}  // namespace shoal::work
