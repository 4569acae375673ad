/* In-process speed of the C API: stz_compress / stz_decompress per preset on one file, with
 * zstd level 3 (libzstd, one thread) in the same run as the reference. Median of N runs.
 * Build against an installed statezip (bench/API.md):
 *   cc -O2 -o api_bench bench/api_bench.c $(pkg-config --cflags --libs statezip libzstd)
 * Usage: api_bench FILE [RUNS] [THREADS] */
#define _POSIX_C_SOURCE 199309L
#include <statezip.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
static int cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}
static double median(double* v, int n) {
    qsort(v, n, sizeof *v, cmp);
    return v[n / 2];
}

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    int runs = argc > 2 ? atoi(argv[2]) : 5, threads = argc > 3 ? atoi(argv[3]) : 1;
    if (runs < 1 || runs > 100) runs = 5;
    FILE* f = fopen(argv[1], "rb");
    if (!f) return 2;
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *src = malloc(n), *back = malloc(n);
    if (fread(src, 1, n, f) != n) return 2;
    fclose(f);
    size_t cap = stz_compress_bound(n) > ZSTD_compressBound(n) ? stz_compress_bound(n) : ZSTD_compressBound(n);
    unsigned char* z = malloc(cap);
    double tc[100], td[100], mb = n / 1e6;
    printf("%s: %zu bytes, %d runs (median), threads %d, statezip %s\n", argv[1], n, runs, threads, stz_version_string());
    printf("%-16s %10s %8s %12s %12s\n", "", "bytes", "ratio", "comp MB/s", "decomp MB/s");
    for (int r = 0; r < runs; r++) {  /* the reference: zstd -3, one thread, in process */
        double t0 = now();
        size_t zn = ZSTD_compress(z, cap, src, n, 3);
        double t1 = now();
        size_t bn = ZSTD_decompress(back, n, z, zn);
        tc[r] = t1 - t0, td[r] = now() - t1;
        if (ZSTD_isError(zn) || bn != n || memcmp(back, src, n)) return 1;
        if (r == runs - 1) printf("%-16s %10zu %8.3f", "zstd:3", zn, (double)n / zn);
    }
    double zc = mb / median(tc, runs), zd = mb / median(td, runs);
    printf(" %12.1f %12.1f\n", zc, zd);
    const char* names[] = {"fast", "default", "max"};
    for (int p = 1; p <= 3; p++) {
        stz_params params;
        stz_params_init(&params);
        params.preset = p;
        params.threads = threads;
        size_t zn = 0, bn = 0;
        for (int r = 0; r < runs; r++) {
            double t0 = now();
            int rc = stz_compress(src, n, z, cap, &zn, &params);
            double t1 = now();
            if (rc == 0) rc = stz_decompress(z, zn, back, n, &bn);
            tc[r] = t1 - t0, td[r] = now() - t1;
            if (rc != 0 || bn != n || memcmp(back, src, n)) {
                fprintf(stderr, "%s: %s\n", stz_error_message(rc), stz_last_error_detail());
                return 1;
            }
        }
        double c = mb / median(tc, runs), d = mb / median(td, runs);
        printf("stz %-12s %10zu %8.3f %12.1f %12.1f   (%.2fx / %.2fx zstd:3)\n", names[p - 1], zn, (double)n / zn, c, d,
               c / zc, d / zd);
    }
    return 0;
}
