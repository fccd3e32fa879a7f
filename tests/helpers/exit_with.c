/* exit_with CODE: exit with CODE (0..255). */
#include <stdlib.h>

int main(int argc, char** argv) {
    return argc > 1 ? atoi(argv[1]) : 0;
}
