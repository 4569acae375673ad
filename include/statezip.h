/* statezip.h: the C API of libstatezip, a lossless compressor for llama.cpp state files
 * (session files, sequence files, raw state blobs). Plain C99; link with
 * `pkg-config --cflags --libs statezip` or CMake's find_package(statezip) -> statezip::statezip.
 *
 * Every function returns 0 (STZ_OK) or a negative STZ_ERROR_* code; stz_error_message(code)
 * names the code and stz_last_error_detail() says what went wrong and where (offset), for the
 * last call on the calling thread. No function aborts or throws on bad input.
 *
 * Thread safety: every function is reentrant; calls on different threads never share state
 * (the detail message is thread-local) beyond memory: buffers of 2 MiB or more that a call
 * frees are kept by the library, up to 64 MiB in all per process, for the next call's buffers
 * of the same size (no page faults on reuse). A call may use worker threads internally
 * (stz_params.threads), which stay parked after it (at most one per core, each for up to 10 s
 * without work) for the next call to use warm; the read/write callbacks of the streaming
 * functions are only ever called from the thread that called the function, one call at a time.
 *
 * Output is the .stz container (docs/FORMAT.md): the same bytes the statezip program writes with
 * the same preset, whatever the thread count. See docs/API.md.
 *
 * ABI: stz_params grows at its end; its struct_size says which fields the caller has, and every
 * older size stays accepted. */
#ifndef STATEZIP_H
#define STATEZIP_H

#include <stddef.h>
#include <stdint.h>

#include "statezip_version.h" /* STATEZIP_VERSION_MAJOR, _MINOR, _PATCH, _STRING, _NUMBER */

#if defined(_WIN32)
#  define STATEZIP_API
#elif defined(__GNUC__) && defined(STATEZIP_BUILDING)
#  define STATEZIP_API __attribute__((visibility("default")))
#else
#  define STATEZIP_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes: 0 = success, negative = failure. */
enum {
    STZ_OK = 0,
    STZ_ERROR_GENERIC = -1,       /* any other failure (see the detail) */
    STZ_ERROR_DST_TOO_SMALL = -2, /* dst_capacity too small: grow it (stz_compress_bound, stz_decompressed_size) */
    STZ_ERROR_CORRUPT = -3,       /* not a valid .stz, damaged or truncated (the detail names the offset) */
    STZ_ERROR_PARAMETER = -4,     /* a NULL pointer, an unknown preset, a bad codec spec, bad struct_size */
    STZ_ERROR_READ = -5,          /* the read callback returned an error */
    STZ_ERROR_WRITE = -6,         /* the write callback returned an error */
    STZ_ERROR_MEMORY = -7,        /* out of memory */
    STZ_ERROR_IO = -8,            /* the temporary file of stz_compress_stream failed */
    STZ_ERROR_REFERENCE = -9      /* the .stz was made with a reference (stz_compress_ref): none,
                                     or another one, was given (the detail names the one it needs) */
};

enum { STZ_PRESET_FAST = 1, STZ_PRESET_DEFAULT = 2, STZ_PRESET_MAX = 3 };

typedef struct stz_params {
    size_t struct_size; /* the caller's sizeof(stz_params), set by stz_params_init: lets the struct grow */
    int preset;         /* STZ_PRESET_FAST, STZ_PRESET_DEFAULT (default), STZ_PRESET_MAX */
    int threads;        /* worker threads; 0 = all cores (default). Output bytes do not depend on it */
    const char* codec;  /* NULL, or a pipeline as the CLI's --codec takes it ("zstd:19", "kv=planes,meta=zstd:3") */
    /* --- added after the first layout (struct_size > STZ_PARAMS_SIZE_V1) --- */
    const char* lossy;  /* NULL (lossless, default), or a mode as the CLI's --lossy takes it: "f16-exact",
                           "drop:K=N,V=M", "keep:K=N,V=M". K/V values are rounded; the .stz says so.
                           Refused by stz_compress_ref */
} stz_params;
/* struct_size of the first layout (the four fields above lossy), still accepted everywhere. */
#define STZ_PARAMS_SIZE_V1 (sizeof(size_t) + 2 * sizeof(int) + sizeof(const char*))

/* "0.2.0": the library's version (may differ from the STATEZIP_VERSION_STRING compiled against). */
STATEZIP_API const char* stz_version_string(void);

/* Fills the first struct_size bytes of *p with the defaults (default preset, all cores, no
 * codec, lossless) and sets p->struct_size = struct_size: pass sizeof(stz_params) (the macro
 * stz_params_init does). struct_size must be STZ_PARAMS_SIZE_V1 or sizeof(stz_params); any
 * other value leaves p->struct_size 0, which every call refuses. */
STATEZIP_API void stz_params_init_size(stz_params* p, size_t struct_size);
/* The first function, kept for programs built against the first layout (and for FFIs such as
 * ctypes that mirror it): fills only its four fields and sets struct_size = STZ_PARAMS_SIZE_V1.
 * C and C++ code compiled against this header calls stz_params_init_size through the macro. */
STATEZIP_API void stz_params_init(stz_params* p);
#define stz_params_init(p) stz_params_init_size((p), sizeof(stz_params))

/* Largest .stz stz_compress can produce from src_size bytes: the input plus 1 KiB + 0.1 % up
 * to 128 MiB, plus at most 68 KiB + 0.4 % above (docs/API.md). */
STATEZIP_API size_t stz_compress_bound(size_t src_size);

/* Compresses src into dst; *dst_size receives the .stz size. params NULL = default preset. */
STATEZIP_API int stz_compress(const void* src, size_t src_size, void* dst, size_t dst_capacity, size_t* dst_size,
                              const stz_params* params);

/* Original size recorded in the header of the .stz in src (src may be just its first bytes,
 * up to the end of the header); for a .stz made with a reference, the size it rebuilds. */
STATEZIP_API int stz_decompressed_size(const void* src, size_t src_size, uint64_t* size);

/* Decompresses the .stz in src into dst and verifies every decoded chunk against its
 * checksum (and a chunk's record checksum where it does not decode as written). On any error
 * the contents of dst are unspecified. Uses all cores. */
STATEZIP_API int stz_decompress(const void* src, size_t src_size, void* dst, size_t dst_capacity, size_t* dst_size);
/* The same with a thread count: 0 = all cores, 1 = one worker thread (the calling
 * thread hands out and collects its chunks beside it). */
STATEZIP_API int stz_decompress_threads(const void* src, size_t src_size, void* dst, size_t dst_capacity,
                                        size_t* dst_size, int threads);

/* Related states (the CLI's --patch-from): compresses src given ref, the bytes of a related
 * state (an earlier save of the same conversation, the raw blob a sequence was cut from, ...).
 * The .stz stores only what ref lacks and records ref's size, XXH3-128 and ref_name (may be
 * NULL; only shown in error messages). A ref of another model, or not a state file, only shares
 * less. The output is usually far smaller than src; dst_capacity below its size gives
 * STZ_ERROR_DST_TOO_SMALL with the size needed in the detail. */
STATEZIP_API int stz_compress_ref(const void* src, size_t src_size, const void* ref, size_t ref_size, const char* ref_name,
                                  void* dst, size_t dst_capacity, size_t* dst_size, const stz_params* params);
/* Decompresses a .stz made by stz_compress_ref (or the CLI's --patch-from) given the same ref
 * bytes: another ref gives STZ_ERROR_REFERENCE before anything is written. An ordinary .stz
 * decodes too (ref is then not used). The rebuilt file is checked against its hash. */
STATEZIP_API int stz_decompress_ref(const void* src, size_t src_size, const void* ref, size_t ref_size, void* dst,
                                    size_t dst_capacity, size_t* dst_size);
/* The same with a thread count (0 = all cores). */
STATEZIP_API int stz_decompress_ref_threads(const void* src, size_t src_size, const void* ref, size_t ref_size,
                                            void* dst, size_t dst_capacity, size_t* dst_size, int threads);

/* Streaming: read returns the number of bytes read (at most n), 0 at the end, < 0 on error;
 * write returns 0 on success. Memory stays bounded (512 MiB of chunks in flight, as the CLI)
 * whatever the input size. stz_compress_stream needs random access to parse the input: it
 * keeps inputs up to 64 MiB in memory and spools larger ones to an unlinked temporary file
 * in $TMPDIR (or /tmp), which needs free disk space of the input's size. */
typedef long long (*stz_read_fn)(void* ctx, void* buf, size_t n);
typedef int (*stz_write_fn)(void* ctx, const void* buf, size_t n);
STATEZIP_API int stz_compress_stream(stz_read_fn read, void* rctx, stz_write_fn write, void* wctx,
                                     const stz_params* params);
/* threads: 0 = all cores. */
STATEZIP_API int stz_decompress_stream(stz_read_fn read, void* rctx, stz_write_fn write, void* wctx, int threads);

/* The sections of a state file, or of the file inside a .stz, as JSON: the object
 * `statezip inspect --json` prints for one file (with "file": "-"). *json is allocated with
 * malloc: release it with stz_free. */
STATEZIP_API int stz_inspect_json(const void* src, size_t src_size, char** json);
STATEZIP_API void stz_free(void* p);

/* A static string naming the code ("destination buffer too small", ...). */
STATEZIP_API const char* stz_error_message(int code);
/* What went wrong in the last call on this thread, with the offset for bad data; "" after a
 * success. Valid until the next call on this thread. */
STATEZIP_API const char* stz_last_error_detail(void);

#ifdef __cplusplus
}
#endif

#endif /* STATEZIP_H */
