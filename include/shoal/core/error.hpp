// The one exception type for problems a user can fix (bad input, impossible
// settings). Its message is a single line that names the file, key or id.
#pragma once

#include <stdexcept>
#include <string>

#include "shoal/core/units.hpp"

namespace shoal {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// A model's invariant broke at simulated time `now`: an Error saying what.
[[noreturn]] inline void invariant_violated(Time now, const std::string& what) {
  throw Error("invariant violated at " + format_time(now) + ": " + what);
}

}  // namespace shoal
