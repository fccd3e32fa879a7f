/* list_fds: print every open file descriptor as "fd N -> TARGET", one per line (TARGET is what
 * /proc/self/fd/N links to). The descriptor used to read the directory is left out. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
    DIR* d = opendir("/proc/self/fd");
    if (d == NULL) {
        perror("list_fds: opendir /proc/self/fd");
        return 1;
    }
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d)) {
            continue;
        }
        char link[64];
        char target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        target[n < 0 ? 0 : n] = '\0';
        printf("fd %s -> %s\n", e->d_name, target);
    }
    closedir(d);
    return 0;
}
