/* print_args: print the working directory, process-group facts, signal state and argv:
 *   cwd=<dir>  own_group=<0|1>  pgid=<n>  sigblk=<hex>  sigign=<hex>  argv0=<argv[0]>  arg=<..>
 * one per line. own_group is 1 when the process leads its own process group. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void print_status_field(const char* field, const char* label) {
    FILE* f = fopen("/proc/self/status", "r");
    char line[256];
    size_t n = strlen(field);
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, field, n) == 0) {
            char* v = line + n;
            while (*v == ' ' || *v == '\t') {
                ++v;
            }
            printf("%s=%s", label, v);
        }
    }
    if (f != NULL) {
        fclose(f);
    }
}

int main(int argc, char** argv) {
    char cwd[4096];
    printf("cwd=%s\n", getcwd(cwd, sizeof cwd) ? cwd : "?");
    printf("own_group=%d\n", getpgrp() == getpid());
    printf("pgid=%d\n", (int)getpgrp());
    print_status_field("SigBlk:", "sigblk");
    print_status_field("SigIgn:", "sigign");
    printf("argv0=%s\n", argv[0]);
    for (int i = 1; i < argc; ++i) {
        printf("arg=%s\n", argv[i]);
    }
    return 0;
}
