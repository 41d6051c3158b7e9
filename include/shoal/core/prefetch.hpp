// A software prefetch the compiler keeps.
//
// GCC 12 removed every __builtin_prefetch of Network::prefetch() once it was
// inlined into the event loop (seen in the assembly, at -O1 and above; the
// cause was not found), so on x86-64 the instruction is written out; elsewhere
// the builtin is the best available.
#pragma once

namespace shoal::core {

inline void prefetch(const void* address) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(address)));
#else
  __builtin_prefetch(address);
#endif
}

}  // namespace shoal::core
