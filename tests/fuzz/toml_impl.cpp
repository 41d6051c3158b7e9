// toml++'s implementation, compiled with the fuzz flags (see CMakeLists.txt).
// Its internal assertions are off, as in Debian's release build of the library
// that `shoal` runs with: toml++ 3.3.0 asserts on input it then rejects
// cleanly, e.g. "[#a]" (TOML_ASSERT_ASSUME in parser::parse_key), which would
// be a finding in toml++, not in Shoal. Its errors still reach our readers.
#define TOML_ASSERT(expr) static_cast<void>(0)
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
