#include "cli.hpp"

int main(int argc, char** argv) {
    return emurun::cli::main(argc, argv);
}
