/* Round-trips a state file through the installed libstatezip (C99, built with pkg-config
 * only by install_test.sh): compress with each preset, decompress, compare. */
#include <statezip.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    FILE* f = fopen(argv[1], "rb");
    if (!f) return 2;
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char* state = malloc(n + 1);
    if (fread(state, 1, n, f) != n) return 2;
    fclose(f);
    const int presets[] = {STZ_PRESET_FAST, STZ_PRESET_DEFAULT, STZ_PRESET_MAX};
    for (int i = 0; i < 3; i++) {
        stz_params p;
        stz_params_init(&p);
        p.preset = presets[i];
        size_t cap = stz_compress_bound(n), zn = 0, back_n = 0;
        uint64_t size = 0;
        unsigned char *z = malloc(cap), *back = malloc(n + 1);
        int rc = stz_compress(state, n, z, cap, &zn, &p);
        if (rc == STZ_OK) rc = stz_decompressed_size(z, zn, &size);
        if (rc == STZ_OK && size != n) rc = STZ_ERROR_GENERIC;
        if (rc == STZ_OK) rc = stz_decompress(z, zn, back, n, &back_n);
        if (rc != STZ_OK || back_n != n || memcmp(back, state, n) != 0) {
            fprintf(stderr, "preset %d: %s: %s\n", presets[i], stz_error_message(rc), stz_last_error_detail());
            return 1;
        }
        printf("preset %d: %zu -> %zu bytes, round trip OK\n", presets[i], n, zn);
        free(z);
        free(back);
    }
    free(state);
    return 0;
}
