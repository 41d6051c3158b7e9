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

}  // namespace shoal::core
