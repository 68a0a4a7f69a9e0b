// Preconditions of the addon's own functions, checked in every build.
//
// As libuv does with assert(), every function of the poller, the ring, the
// arena and the shared memories that takes a descriptor, a slot or an index
// states what it expects at its entry. The bindings reject bad arguments
// from JavaScript with a TypeError/RangeError first (common.h), so a failed
// check is a bug of the addon itself: it aborts naming the condition and
// where, rather than let a wrong index write into memory. The checks are
// comparisons, cheap enough for release builds (NDEBUG does not remove them).
#ifndef BOBBIN_NATIVE_CHECK_H_
#define BOBBIN_NATIVE_CHECK_H_

#include <cstdio>
#include <cstdlib>

namespace bobbin {

[[noreturn]] inline void CheckFailed(const char* condition, const char* file, int line) {
  fprintf(stderr, "bobbin native addon: %s:%d: check failed: %s\n", file, line, condition);
  fflush(stderr);
  abort();
}

}  // namespace bobbin

#define BOBBIN_CHECK(condition) ((condition) ? static_cast<void>(0) : ::bobbin::CheckFailed(#condition, __FILE__, __LINE__))

#endif  // BOBBIN_NATIVE_CHECK_H_
