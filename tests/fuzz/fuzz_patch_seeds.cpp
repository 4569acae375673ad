// Writes the seeds of the patch fuzz target (fuzz_entry.hpp) into the folder given.
#include <cstdio>

#include "fuzz_entry.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: fuzz_patch_seeds DIR\n");
        return 2;
    }
    stzfuzz::write_patch_seeds(argv[1]);
    return 0;
}
