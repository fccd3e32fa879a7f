/* print_bytes OUT ERR: write OUT bytes to stdout and ERR bytes to stderr, alternating in 64 KiB
 * chunks (so a reader that drains only one pipe would deadlock). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int put(int fd, const char* buf, long long* left) {
    size_t n = *left < 65536 ? (size_t)*left : 65536;
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) {
            return -1;
        }
        n -= (size_t)w;
        *left -= w;
    }
    return 0;
}

int main(int argc, char** argv) {
    long long out = argc > 1 ? atoll(argv[1]) : 0;
    long long err = argc > 2 ? atoll(argv[2]) : 0;
    static char buf[65536];
    memset(buf, 'x', sizeof buf);
    while (out > 0 || err > 0) {
        if ((out > 0 && put(1, buf, &out) != 0) || (err > 0 && put(2, buf, &err) != 0)) {
            return 1;
        }
    }
    return 0;
}
