// What AddressSanitizer needs to know about this build and about memory trex manages itself.
//
// kAddressSanitizer: whether this build is instrumented with ASan (scripts/test.sh --sanitize, scripts/fuzz.sh).
// asan_poison / asan_unpoison: mark [p, p + n) unaddressable / addressable in ASan builds (no-ops otherwise), for
// arenas that hand out several tensors from one allocation: the gaps between them are poisoned, so a kernel that runs
// past its tensor is reported where it happens instead of silently writing into its neighbour. ASan tracks 8-byte
// granules: a gap that starts inside a granule is poisoned from the next one.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define TREX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TREX_ASAN 1
#endif
#endif

#ifdef TREX_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace trex {

#ifdef TREX_ASAN
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

inline void asan_poison(const void* p, size_t n) {
#ifdef TREX_ASAN
    ASAN_POISON_MEMORY_REGION(p, n);
#else
    (void)p;
    (void)n;
#endif
}

inline void asan_unpoison(const void* p, size_t n) {
#ifdef TREX_ASAN
    ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
    (void)p;
    (void)n;
#endif
}

}  // namespace trex
