/* Two or more builds of libstatezip timed in one process, call by call in turn: the fair A/B on a
 * machine whose speed drifts in phases (two builds timed one after the other can each fall into
 * the same phase every round). Each library is loaded on its own (dlopen, RTLD_LOCAL), compresses
 * every file itself, then the libraries take turns on every call; per library the sum over the
 * files of its fastest call and of its median call. A library against a copy of itself: within
 * 1 % here (bench/PROFILE.md, twenty-fifth pass).
 *   cc -O2 -o lib_duel bench/lib_duel.c -Iinclude -Ibuild/include -ldl
 *   lib_duel d|c RUNS LIB.so [LIB.so ...] -- FILE...   (d: stz_decompress, c: stz_compress; -T1)
 * CODEC=... in the environment: the pipeline every library compresses with (as stz_params.codec);
 * LIB.so=PIPELINE: that one library's pipeline or preset (fast, default, max): e.g. the same build
 * twice, once as LIB.so=zstd:3, for statezip against the speed reference in turn, call by call;
 * PRESET=fast|max: that preset instead of the default. COLD=MB: before every timed call, that many
 * MB written and read (not timed), so that each call starts with cold caches, as a call in a server
 * does after inference or another pipeline in `statezip bench` does after `max`. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <statezip.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kMaxLibs = 8 };
typedef int (*compress_fn)(const void*, size_t, void*, size_t, size_t*, const stz_params*);
typedef int (*decompress_fn)(const void*, size_t, void*, size_t, size_t*, int);
typedef void (*init_fn)(stz_params*, size_t);

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
static int by_value(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
    if (argc < 5) return 2;
    const char mode = argv[1][0];
    const int runs = atoi(argv[2]);
    const char* const preset = getenv("PRESET");
    int n_libs = 0, a = 3;
    compress_fn compress[kMaxLibs];
    decompress_fn decompress[kMaxLibs];
    init_fn init[kMaxLibs];
    const char* own[kMaxLibs];  // the pipeline or preset after LIB.so=, else NULL
    for (; a < argc && strcmp(argv[a], "--") != 0; ++a) {
        char path[4096];
        const char* eq = strchr(argv[a], '=');
        snprintf(path, sizeof path, "%.*s", eq ? (int)(eq - argv[a]) : (int)strlen(argv[a]), argv[a]);
        if (n_libs < kMaxLibs) own[n_libs] = eq ? eq + 1 : NULL;
        void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h || n_libs == kMaxLibs) return fprintf(stderr, "%s: %s\n", argv[a], h ? "too many" : dlerror()), 2;
        compress[n_libs] = (compress_fn)dlsym(h, "stz_compress");
        decompress[n_libs] = (decompress_fn)dlsym(h, "stz_decompress_threads");
        init[n_libs] = (init_fn)dlsym(h, "stz_params_init_size");
        if (!compress[n_libs] || !decompress[n_libs] || !init[n_libs]) return 2;
        ++n_libs;
    }
    if (runs < 1 || a >= argc || n_libs == 0) return 2;
    double fastest[kMaxLibs] = {0}, median[kMaxLibs] = {0}, bytes = 0, packed[kMaxLibs] = {0};
    double* t = malloc(sizeof(double) * (size_t)runs * n_libs);
    const size_t cold = getenv("COLD") ? (size_t)atol(getenv("COLD")) << 20 : 0;
    unsigned char* evict = cold ? malloc(cold) : NULL;
    volatile unsigned char sink = 0;
    for (int f = a + 1; f < argc; ++f) {
        FILE* in = fopen(argv[f], "rb");
        if (!in) return 2;
        fseek(in, 0, SEEK_END);
        const size_t n = (size_t)ftell(in);
        fseek(in, 0, SEEK_SET);
        unsigned char *src = malloc(n), *back = malloc(n + 1);
        if (fread(src, 1, n, in) != n) return 2;
        fclose(in);
        bytes += n;
        const size_t cap = 2 * n + (1 << 20);
        unsigned char* z[kMaxLibs];
        size_t zn[kMaxLibs];
        stz_params p[kMaxLibs];
        for (int l = 0; l < n_libs; ++l) {
            init[l](&p[l], sizeof p[l]);
            p[l].threads = 1, p[l].codec = getenv("CODEC");
            if (preset) p[l].preset = !strcmp(preset, "fast") ? STZ_PRESET_FAST : !strcmp(preset, "max") ? STZ_PRESET_MAX : p[l].preset;
            if (own[l]) {  // LIB.so=...: a preset's name, or a pipeline, instead of the environment's
                const int named = !strcmp(own[l], "fast") ? STZ_PRESET_FAST : !strcmp(own[l], "max") ? STZ_PRESET_MAX
                                  : !strcmp(own[l], "default") ? STZ_PRESET_DEFAULT : -1;
                if (named >= 0) p[l].preset = named, p[l].codec = NULL;
                else p[l].codec = own[l];
            }
            z[l] = malloc(cap);
            if (compress[l](src, n, z[l], cap, &zn[l], &p[l])) return fprintf(stderr, "%s: compress failed\n", argv[f]), 1;
        }
        for (int r = 0; r < runs; ++r)
            for (int l = 0; l < n_libs; ++l) {
                size_t out = 0;
                if (evict) {
                    memset(evict, r + l, cold);
                    for (size_t i = 0; i < cold; i += 64) sink += evict[i];
                }
                const double t0 = now();
                const int rc = mode == 'd' ? decompress[l](z[l], zn[l], back, n, &out, 1)
                                           : compress[l](src, n, z[l], cap, &zn[l], &p[l]);
                t[l * runs + r] = now() - t0;
                if (rc) return fprintf(stderr, "%s: failed\n", argv[f]), 1;
            }
        for (int l = 0; l < n_libs; ++l) {
            qsort(t + l * runs, runs, sizeof(double), by_value);
            fastest[l] += t[l * runs], median[l] += t[l * runs + runs / 2];
            packed[l] += (double)zn[l];
            free(z[l]);
        }
        free(src), free(back);
    }
    for (int l = 0; l < n_libs; ++l)
        printf("%-40s fastest %8.1f MB/s  median %8.1f MB/s  %.0f bytes\n", argv[3 + l], bytes / fastest[l] / 1e6,
               bytes / median[l] / 1e6, packed[l]);
    free(t), free(evict);
    return 0;
}
