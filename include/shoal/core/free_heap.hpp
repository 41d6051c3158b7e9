// Hands the heap's free pages back to the system. Building a DAG frees many
// small blocks (dependency names, the generator's scratch) that the allocator
// keeps resident; the next large arrays are mapped afresh and never reuse
// them, so without this they would count towards a rank's peak.
#pragma once

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace shoal::core {

inline void release_free_heap() {
#ifdef __GLIBC__
  ::malloc_trim(0);
#endif
}

/// Gives every block of 128 KiB or more a mapping of its own, for the whole
/// process (main calls it first). glibc raises that threshold, up to 32 MiB,
/// each time it frees such a block: once a weighted run's first DAG was
/// freed, the second DAG's growing arrays came from the heap, and each
/// doubling left its old array there, resident. A mapped block goes back
/// when freed, and grows by remapping (GrowingArray), without a copy.
inline void map_large_blocks() {
#ifdef __GLIBC__
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

}  // namespace shoal::core
