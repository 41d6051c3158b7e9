// The lengths of the sequences packed into each micro-batch (docs/training.md,
// "Sequence lengths"): fixed, drawn from a law, or read from a file. A
// micro-batch keeps its tokens; only its attention score work, which grows
// with the sum of the squared lengths, changes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shoal::work {

enum class LengthLaw : std::uint8_t {
  kFixed,      // every sequence `model.sequence` tokens (Shoal's counting before the law)
  kUniform,    // uniform integers in [sequence_min, sequence_max]
  kLogNormal,  // ln(length) ~ Normal(sequence_mu, sequence_sigma), rounded, at least 1
  kFile,       // a file's lengths in order, repeated when it runs out
};

struct SequenceSpec {
  LengthLaw law = LengthLaw::kFixed;
  std::uint64_t min = 0, max = 0;  // uniform, inclusive
  double mu = 0, sigma = 0;        // log-normal: of the length's natural logarithm
  std::uint64_t seed = 1;
  /// The lengths file: as the config spells it, the folder it is relative to,
  /// and the file found (set by the run config's reader, which records it).
  std::string file_name;
  std::string file_base;
  std::string file;
};

/// A lengths file: one positive integer a line; blank lines and text after
/// `#` are ignored. An Error names the file and line of a bad entry, or the
/// file if it holds no length.
std::vector<std::uint64_t> read_sequence_lengths(const std::string& path);

/// The sum of the squared sequence lengths of each micro-batch of each
/// data-parallel replica and iteration: lengths are taken in order (from the
/// law's stream for that micro-batch, or from the file's next entry) and
/// packed until `tokens` are full, the last one cut to fit.
class SequencePacking {
 public:
  SequencePacking() = default;
  /// `replicas` data-parallel replicas; `lengths` the file's when law is kFile.
  SequencePacking(const SequenceSpec& spec, std::uint64_t tokens, std::uint32_t iterations,
                  std::uint32_t micro_batches, std::uint32_t replicas, std::uint64_t job,
                  const std::vector<std::uint64_t>& lengths = {});
  double square_sum(std::uint32_t iteration, std::uint32_t mb, std::uint32_t replica) const {
    return sums_[(std::size_t{iteration} * micro_batches_ + mb) * replicas_ + replica];
  }

 private:
  std::uint32_t micro_batches_ = 0, replicas_ = 0;
  std::vector<double> sums_;
};

}  // namespace shoal::work
