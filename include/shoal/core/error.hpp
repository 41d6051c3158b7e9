// The one exception type for problems a user can fix (bad input, impossible
// settings). Its message is a single line that names the file, key or id.
#pragma once

#include <stdexcept>
#include <string>

namespace shoal {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace shoal
