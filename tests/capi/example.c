#include <statezip.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    size_t n = 1 << 20, zn = 0, back_n = 0;
    unsigned char* state = malloc(n);              /* e.g. llama_state_get_data() */
    for (size_t i = 0; i < n; i++) state[i] = (unsigned char)(i % 251 * (i / 4096 % 3));
    size_t cap = stz_compress_bound(n);
    unsigned char *z = malloc(cap), *back = malloc(n);
    int rc = stz_compress(state, n, z, cap, &zn, NULL);  /* NULL = default preset */
    if (rc == 0) rc = stz_decompress(z, zn, back, n, &back_n);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", stz_error_message(rc), stz_last_error_detail());
        return 1;
    }
    printf("statezip %s: %zu -> %zu bytes, %s\n", stz_version_string(), n, zn,
           back_n == n && memcmp(state, back, n) == 0 ? "round trip OK" : "MISMATCH");
    return back_n == n && memcmp(state, back, n) == 0 ? 0 : 1;
}
