/* Compile-time layout checks usable from C99, C11 and C++. */
#ifndef KILN_ABI_STATIC_ASSERT_H
#define KILN_ABI_STATIC_ASSERT_H

#if defined(__cplusplus)
#define KILN_STATIC_ASSERT(cond, name) static_assert(cond, #name)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define KILN_STATIC_ASSERT(cond, name) _Static_assert(cond, #name)
#else
#define KILN_STATIC_ASSERT(cond, name)                                         \
  typedef char kiln_static_assert_##name[(cond) ? 1 : -1]
#endif

#endif
