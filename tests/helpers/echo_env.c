/* echo_env [NAME...]: print NAME=value for each NAME (NAME unset: "NAME" alone), or the
 * whole environment when no NAME is given. */
#include <stdio.h>
#include <stdlib.h>

extern char** environ;

int main(int argc, char** argv) {
    if (argc == 1) {
        for (char** e = environ; *e != NULL; ++e) {
            puts(*e);
        }
        return 0;
    }
    for (int i = 1; i < argc; ++i) {
        const char* v = getenv(argv[i]);
        if (v != NULL) {
            printf("%s=%s\n", argv[i], v);
        } else {
            printf("%s\n", argv[i]);
        }
    }
    return 0;
}
