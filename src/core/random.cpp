#include "shoal/core/random.hpp"

namespace shoal::core {

// Marsaglia and Tsang, "The Ziggurat Method for Generating Random Variables"
// (J. Stat. Software 5(8), 2000), exponential case with 256 layers: r is the
// start of the tail and v the common area of each layer.
ExponentialZiggurat::ExponentialZiggurat() {
  constexpr double m = 4294967296.0;  // 2^32
  constexpr double v = 3.949659822581572e-3;
  double d = 7.69711747013104972;
  double t = d;
  const double q = v / std::exp(-d);
  k[0] = static_cast<std::uint32_t>((d / q) * m);
  k[1] = 0;
  w[0] = q / m;
  w[255] = d / m;
  f[0] = 1.0;
  f[255] = std::exp(-d);
  for (int i = 254; i >= 1; --i) {
    d = -std::log(v / d + std::exp(-d));
    k[static_cast<std::size_t>(i) + 1] = static_cast<std::uint32_t>((d / t) * m);
    t = d;
    f[static_cast<std::size_t>(i)] = std::exp(-d);
    w[static_cast<std::size_t>(i)] = d / m;
  }
}

}  // namespace shoal::core
