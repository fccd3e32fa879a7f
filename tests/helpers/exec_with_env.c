/* exec_with_env: run a program with exactly the environment entries given, as written:
 *   exec_with_env [ENTRY...] -- PROGRAM [ARG...]
 * ENTRY may repeat a name or lack '=' (a shell cannot pass such an environment). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
    int sep = 1;
    while (sep < argc && strcmp(argv[sep], "--") != 0) {
        ++sep;
    }
    if (sep + 1 >= argc) {
        fprintf(stderr, "usage: exec_with_env [ENTRY...] -- PROGRAM [ARG...]\n");
        return 2;
    }
    char* env[argc];
    int n = 0;
    for (int i = 1; i < sep; ++i) {
        env[n++] = argv[i];
    }
    env[n] = NULL;
    execve(argv[sep + 1], argv + sep + 1, env);
    perror(argv[sep + 1]);
    return 127;
}
