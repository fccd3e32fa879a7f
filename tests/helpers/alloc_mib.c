/* alloc_mib N: allocate N MiB and touch every page, so max RSS grows by N MiB. */
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
    size_t n = (size_t)(argc > 1 ? atol(argv[1]) : 1) << 20;
    char* p = malloc(n);
    if (p == NULL) {
        return 1;
    }
    memset(p, 1, n);
    volatile char sink = p[n / 2];
    (void)sink;
    free(p);
    return 0;
}
