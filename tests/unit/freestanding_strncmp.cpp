// Freestanding code that needs strncmp: the freestanding check must reject it,
// since firmware only has to provide memcpy, memset, memmove and memcmp.
#include <stddef.h>

extern "C" int strncmp(const char *a, const char *b, size_t n);

int kilnNeedsStrncmp(const char *a, const char *b, size_t n) { return strncmp(a, b, n) == 0; }
