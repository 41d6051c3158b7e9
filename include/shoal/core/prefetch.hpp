// A software prefetch the compiler keeps.
//
// GCC 12 drops some __builtin_prefetch calls whose address it can compute
// without a load it needs anyway (it removed every prefetch of
// Network::prefetch() once inlined, checked in the assembly), so on x86-64 the
// instruction is written out; elsewhere the builtin is the best available.
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
