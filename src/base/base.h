/* base: configuration macros, status and errors, allocators and arenas,
 * element types, checked size arithmetic. Everything else builds on this. */
#ifndef PFVM_BASE_H
#define PFVM_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <string.h>

/* Version of pfvm: PFVM_VERSION is major * 10000 + minor * 100 + patch. */
#define PFVM_VERSION_MAJOR 0
#define PFVM_VERSION_MINOR 1
#define PFVM_VERSION_PATCH 0
#define PFVM_VERSION_STRING "0.1.0"
#define PFVM_VERSION (PFVM_VERSION_MAJOR * 10000 + PFVM_VERSION_MINOR * 100 + PFVM_VERSION_PATCH)

#ifndef PFVM_API
#ifdef PFVM_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define PFVM_API static __attribute__((unused))
#else
#define PFVM_API static
#endif
#else
#define PFVM_API extern
#endif
#endif


/* pfvm:internal-begin */
/* Bytes of each block the IR's arenas (names, shapes, attributes, plan
 * constants) take from the allocator; larger requests get a block of
 * their own. Small models on microcontrollers want less (tests/mcu: 1024). */
#ifndef PFVM_ARENA_CHUNK
#define PFVM_ARENA_CHUNK 16384
#endif

/* PFVM_PLANNED_ONLY: only models with a stored plan are run, so nothing
 * that infers or plans is needed (see src/doc/pfvm.h.txt). */
#if defined(PFVM_PLANNED_ONLY) && !defined(PFVM_NO_SHAPE_INFERENCE)
#define PFVM_NO_SHAPE_INFERENCE 1
#endif

/* PFVM__NO_FUNCTIONS: PFVM_PLANNED_ONLY with PFVM_NO_FUSION reads no
 * model-local functions (fused groups could only run node by node through a
 * subgraph executor, which such a build does not link), so nothing calls
 * one: the call operator, its kernel and the stored plan's `d` records go. */
#if defined(PFVM_PLANNED_ONLY) && defined(PFVM_NO_FUSION)
#define PFVM__NO_FUNCTIONS 1
#else
#define PFVM__NO_FUNCTIONS 0
#endif

/* PFVM__F64: the kernels' paths for floating-point types other than float32
 * and whatever they compute in double; PFVM_FLOAT32_ONLY leaves them out,
 * so that a float32 model on a single-precision FPU links no soft-double
 * routine (kernels test it as a constant: the compiler drops the paths). */
#ifdef PFVM_FLOAT32_ONLY
#define PFVM__F64 0
#else
#define PFVM__F64 1
#endif

/* The C library's allocator, unless the program names its own (each macro
 * on its own). pfvm allocates with PFVM_REALLOC and frees with PFVM_FREE
 * only; PFVM_MALLOC is accepted for symmetry and never called. */
#ifndef PFVM_REALLOC
#include <stdlib.h>
#define PFVM_REALLOC(p, sz) realloc(p, sz)
#endif
#ifndef PFVM_FREE
#include <stdlib.h>
#define PFVM_FREE(p) free(p)
#endif
#ifndef PFVM_MALLOC
#define PFVM_MALLOC(sz) PFVM_REALLOC(NULL, sz)
#endif

#ifndef PFVM_ASSERT
#include <assert.h>
#define PFVM_ASSERT(x) assert(x)
#endif
/* pfvm:internal-end */

/* Largest tensor rank pfvm handles; tensors keep their dims inline. */
#ifndef PFVM_MAX_RANK
#define PFVM_MAX_RANK 8
#endif

/* Alignment of tensor data and of the executor's arena and its slots: a
 * cache line. A power of two from 16 to 128. */
#ifndef PFVM_DATA_ALIGN
#define PFVM_DATA_ALIGN 64
#endif

/* pfvm:internal-begin */
/* Internal functions and tables (pfvm__*, and the helpers of operator hooks)
 * are declared PFVM_INTERNAL. In the amalgamated headers (amalgamate.py
 * defines PFVM__AMALGAMATION) they are static: an object file built with
 * PFVM_IMPLEMENTATION exports the public API only, and two copies built with
 * PFVM_STATIC link into one program. In the per-module build of src/ (the
 * unit tests' libpfvm.a) they keep external linkage. `unused`: a program
 * calls only part of the library. */
#ifdef PFVM__AMALGAMATION
#if defined(__GNUC__) || defined(__clang__)
#define PFVM_INTERNAL static __attribute__((unused))
#else
#define PFVM_INTERNAL static
#endif
#else
#define PFVM_INTERNAL
#endif

/* stb_ds, private to the implementation. Its allocation goes through pfvm's
 * allocator. Use its arrays and string maps only: its hash of 4- and 8-byte
 * binary keys shifts signed ints past their width (undefined behaviour that
 * UBSan reports). In the amalgamation its functions are renamed pfvm__stbds_*
 * and declared static before stb_ds declares them (a later extern
 * declaration keeps the internal linkage), so that a program's own stb_ds,
 * included before or after pfvm or built elsewhere, never meets pfvm's. */
#ifdef PFVM__AMALGAMATION
#define stbds_rand_seed pfvm__stbds_rand_seed
#define stbds_hash_bytes pfvm__stbds_hash_bytes
#define stbds_hash_string pfvm__stbds_hash_string
#define stbds_stralloc pfvm__stbds_stralloc
#define stbds_strreset pfvm__stbds_strreset
#define stbds_unit_tests pfvm__stbds_unit_tests
#define stbds_arrgrowf pfvm__stbds_arrgrowf
#define stbds_arrfreef pfvm__stbds_arrfreef
#define stbds_hmfree_func pfvm__stbds_hmfree_func
#define stbds_hmget_key pfvm__stbds_hmget_key
#define stbds_hmget_key_ts pfvm__stbds_hmget_key_ts
#define stbds_hmput_default pfvm__stbds_hmput_default
#define stbds_hmput_key pfvm__stbds_hmput_key
#define stbds_hmdel_key pfvm__stbds_hmdel_key
#define stbds_shmode_func pfvm__stbds_shmode_func
#if defined(__cplusplus) /* (kept by amalgamate.py, which drops #ifdef __cplusplus wrappers) */
extern "C" {
#endif
struct stbds_string_arena;
PFVM_INTERNAL void stbds_rand_seed(size_t seed);
PFVM_INTERNAL size_t stbds_hash_bytes(void *p, size_t len, size_t seed);
PFVM_INTERNAL size_t stbds_hash_string(char *str, size_t seed);
PFVM_INTERNAL char *stbds_stralloc(struct stbds_string_arena *a, char *str);
PFVM_INTERNAL void stbds_strreset(struct stbds_string_arena *a);
PFVM_INTERNAL void *stbds_arrgrowf(void *a, size_t elemsize, size_t addlen, size_t min_cap);
PFVM_INTERNAL void stbds_arrfreef(void *a);
PFVM_INTERNAL void stbds_hmfree_func(void *p, size_t elemsize);
PFVM_INTERNAL void *stbds_hmget_key(void *a, size_t elemsize, void *key, size_t keysize, int mode);
PFVM_INTERNAL void *stbds_hmget_key_ts(void *a, size_t elemsize, void *key, size_t keysize, ptrdiff_t *temp,
                                       int mode);
PFVM_INTERNAL void *stbds_hmput_default(void *a, size_t elemsize);
PFVM_INTERNAL void *stbds_hmput_key(void *a, size_t elemsize, void *key, size_t keysize, int mode);
PFVM_INTERNAL void *stbds_hmdel_key(void *a, size_t elemsize, void *key, size_t keysize, size_t keyoffset,
                                    int mode);
PFVM_INTERNAL void *stbds_shmode_func(size_t elemsize, int mode);
#if defined(__cplusplus)
}
#endif
#endif
#ifndef STBDS_NO_SHORT_NAMES
#define STBDS_NO_SHORT_NAMES
#endif
#undef STBDS_REALLOC
#undef STBDS_FREE
#define STBDS_REALLOC(ctx, p, sz) pfvm__realloc(p, sz)
#define STBDS_FREE(ctx, p) pfvm__free(p)
#include <stb/stb_ds.h>
/* stb_ds takes keys' addresses with a GNU `typeof` extension that strict
 * C99 lacks; pfvm always passes lvalue keys, so the plain form serves. */
#undef STBDS_ADDRESSOF
#define STBDS_ADDRESSOF(typevar, value) &(value)
/* pfvm:internal-end */

/* pfvm:internal-begin */
/* Checked growth of stb_ds arrays. stb_ds's own growth (inside
 * stbds_arrput, stbds_arrsetlen, stbds_arraddnptr) writes its header
 * through the NULL that a failed realloc returns, so pfvm never lets it
 * grow an array: every push reserves first through pfvm__arr_grow, which
 * leaves the array as it was when memory runs out. Each macro evaluates to
 * 1 on success and 0 when out of memory (pfvm__arraddn: the new elements,
 * or NULL); `a` is an lvalue, evaluated more than once. */
#define pfvm__arrreserve(a, n) \
    ((size_t)(n) <= stbds_arrcap(a) || ((a) = PFVM__ARR_GROW((a), sizeof *(a), (size_t)(n)), (size_t)(n) <= stbds_arrcap(a)))
/* (after the reserve the array has the room: the element is stored and
 * the length set without stb_ds's own growth check, code at every push) */
#define pfvm__arrpush(a, v) \
    (pfvm__arrreserve((a), (size_t)stbds_arrlen(a) + 1) ? (pfvm__arrput_reserved((a), (v)), 1) : 0)
/* Appends v to `a`, which a pfvm__arrreserve has given the room for it. */
#define pfvm__arrput_reserved(a, v) ((a)[stbds_header(a)->length++] = (v))
#define pfvm__arrsetlen(a, n) \
    (pfvm__arrreserve((a), (n)) ? ((a) ? (stbds_header(a)->length = (size_t)(n)) : 0, 1) : 0)
/* Shortens an array (never grows it). */
#define pfvm__arrtrunc(a, n) \
    stbds_arrsetlen((a), (size_t)(n) < (size_t)stbds_arrlen(a) ? (size_t)(n) : (size_t)stbds_arrlen(a))
#define pfvm__arraddn(a, n) \
    ((size_t)stbds_arrlen(a) <= (size_t)-1 - (size_t)(n) && pfvm__arrreserve((a), (size_t)stbds_arrlen(a) + (size_t)(n)) \
         ? stbds_arraddnptr((a), (n))                                                                      \
         : NULL)
/* pfvm:internal-end */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ------------------------------------------------------------ */

typedef enum pfvm_code {
    PFVM_OK = 0,
    PFVM_ERR_INVALID,     /* malformed model or argument */
    PFVM_ERR_PARSE,       /* bytes are not a valid protobuf / file format */
    PFVM_ERR_UNSUPPORTED, /* valid ONNX that pfvm does not implement */
    PFVM_ERR_SHAPE,       /* shapes or types do not agree */
    PFVM_ERR_NOMEM,       /* an allocation failed or a size overflowed */
    PFVM_ERR_IO,          /* a file could not be read or written */
    PFVM_ERR_RANGE,       /* an index or value is out of range */
    PFVM_ERR_RUNTIME      /* a kernel failed while running */
} pfvm_code;

#ifndef PFVM_STATUS_MSG
#define PFVM_STATUS_MSG 384
#endif

/* Every fallible call takes a `pfvm_status *` (may be NULL) and returns a
 * pfvm_code; on failure the status holds the code and a message that names
 * the node, the op and the problem. */
typedef struct pfvm_status {
    pfvm_code code;
    char msg[PFVM_STATUS_MSG];
} pfvm_status;

/* Name of an error code ("invalid", "unsupported", ...). */
PFVM_API const char *pfvm_code_name(pfvm_code c);

/* For programs' own errors: sets *st (if non-NULL) to code and a
 * printf-style message, and returns code. */
PFVM_API pfvm_code pfvm_status_set(pfvm_status *st, pfvm_code code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Prepends "prefix: " to st's message (for context such as a file name). */
PFVM_API void pfvm_status_prefix(pfvm_status *st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- allocator --------------------------------------------------------- */

/* A run-time allocator: realloc(user, NULL, n) allocates, realloc(user, p, n)
 * resizes, realloc(user, p, 0) frees (and returns NULL). `user` must outlive
 * every block the allocator made. An all-zero pfvm_allocator means "the
 * default": the process-wide one from pfvm_set_allocator, else
 * PFVM_REALLOC/PFVM_FREE.
 *
 * Which allocator serves an allocation: a model has its own
 * (pfvm_model_desc.allocator; its graphs, symbol table, executors, passes
 * and saved bytes use it too), a standalone tensor names its own
 * (pfvm_tensor_desc.allocator), anything else uses the default. Every block
 * remembers the allocator that made it, so frees and resizes always reach
 * that one, whichever object or thread releases the block and whatever
 * the default is by then. */
typedef struct pfvm_allocator {
    void *(*realloc)(void *user, void *ptr, size_t size);
    void *user;
} pfvm_allocator;

/* Install the process-wide default allocator (NULL restores the macros).
 * Objects made before keep theirs. Not thread-safe: call it while no other
 * thread uses pfvm. */
PFVM_API void pfvm_set_allocator(const pfvm_allocator *a);

/* A bump allocator over a caller buffer, for heap-free builds: pass
 * pfvm_bump_allocator(&b) to pfvm_set_allocator or to one model's
 * pfvm_model_desc. Freed blocks are not reused except the last one. */
typedef struct pfvm_bump {
    unsigned char *buf;
    size_t size, used, last;
} pfvm_bump;
PFVM_API void pfvm_bump_init(pfvm_bump *b, void *buf, size_t size);
PFVM_API pfvm_allocator pfvm_bump_allocator(pfvm_bump *b);

/* ---- element types (values are ONNX TensorProto.DataType) -------------- */

typedef enum pfvm_dtype {
    PFVM_UNDEFINED = 0,
    PFVM_FLOAT = 1,
    PFVM_UINT8 = 2,
    PFVM_INT8 = 3,
    PFVM_UINT16 = 4,
    PFVM_INT16 = 5,
    PFVM_INT32 = 6,
    PFVM_INT64 = 7,
    PFVM_STRING = 8,
    PFVM_BOOL = 9,
    PFVM_FLOAT16 = 10,
    PFVM_DOUBLE = 11,
    PFVM_UINT32 = 12,
    PFVM_UINT64 = 13,
    PFVM_COMPLEX64 = 14,
    PFVM_COMPLEX128 = 15,
    PFVM_BFLOAT16 = 16,
    PFVM_FLOAT8E4M3FN = 17,
    PFVM_FLOAT8E4M3FNUZ = 18,
    PFVM_FLOAT8E5M2 = 19,
    PFVM_FLOAT8E5M2FNUZ = 20,
    PFVM_UINT4 = 21,
    PFVM_INT4 = 22,
    PFVM_DTYPE_COUNT
} pfvm_dtype;

/* Bytes per element (strings: sizeof(char*); 4-bit types: 1, unpacked). 0
 * for undefined/unknown codes. */
PFVM_API size_t pfvm_dtype_size(pfvm_dtype t);
/* Lower-case ONNX-style name: "float", "int64", "bool", "float16"... */
PFVM_API const char *pfvm_dtype_name(pfvm_dtype t);
/* Parses a name from pfvm_dtype_name; PFVM_UNDEFINED when unknown. */
PFVM_API pfvm_dtype pfvm_dtype_from_name(const char *name);
PFVM_API int pfvm_dtype_is_float(pfvm_dtype t);  /* float16/bfloat16/float/double */
PFVM_API int pfvm_dtype_is_int(pfvm_dtype t);    /* signed or unsigned integer */
PFVM_API int pfvm_dtype_is_signed(pfvm_dtype t);

/* float16 / bfloat16 conversions (round to nearest even). */
PFVM_API float pfvm_half_to_float(uint16_t h);
PFVM_API uint16_t pfvm_float_to_half(float f);
PFVM_API float pfvm_bf16_to_float(uint16_t h);
PFVM_API uint16_t pfvm_float_to_bf16(float f);

/* ---- internal helpers (shared by the modules) --------------------------- */

/* pfvm:internal-begin */
/* The allocator new blocks come from, per thread where the compiler has
 * thread-local storage (else one per process: then only one thread may use
 * objects with their own allocators at a time). A public entry point that
 * takes an object sets it from that object for its duration: the ~300
 * growth sites (stb_ds included) take no allocator parameter. */
#ifndef PFVM_THREAD_LOCAL
#if !(defined(__unix__) || defined(__APPLE__) || defined(_WIN32))
/* bare metal and RTOSes: thread-local storage needs run-time support
 * (arm-none-eabi links __aeabi_read_tp only from an OS) */
#define PFVM_THREAD_LOCAL
#elif defined(__cplusplus) && __cplusplus >= 201103L
#define PFVM_THREAD_LOCAL thread_local
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_THREADS__)
#define PFVM_THREAD_LOCAL _Thread_local
#elif defined(__GNUC__) || defined(__clang__)
#define PFVM_THREAD_LOCAL __thread
#elif defined(_MSC_VER)
#define PFVM_THREAD_LOCAL __declspec(thread)
#else
#define PFVM_THREAD_LOCAL
#endif
#endif
/* A scope lives on the entry point's stack; scopes nest (save/restore), so
 * a kernel that runs another model's executor works. */
typedef struct pfvm__scope {
    const pfvm_allocator *prev;
    pfvm_allocator a;
} pfvm__scope;
/* The whole body of a public entry point: returns `call` (its static
 * pfvm__scoped_ twin, of type T) run with allocator `a` current, so
 * that every block the call grows comes from the object's model. */
#define PFVM__SCOPED(T, a, call)      \
    pfvm__scope pfvm__sc;             \
    T pfvm__r;                        \
    pfvm__scope_enter(&pfvm__sc, a);  \
    pfvm__r = call;                   \
    pfvm__scope_leave(&pfvm__sc);     \
    return pfvm__r
/* pfvm:internal-end */
PFVM_INTERNAL void pfvm__scope_enter(pfvm__scope *s, const pfvm_allocator *a);
PFVM_INTERNAL void pfvm__scope_leave(pfvm__scope *s);
/* The allocator new blocks come from now (the scope's, else the default). */
PFVM_INTERNAL pfvm_allocator pfvm__alloc_current(void);

PFVM_INTERNAL void *pfvm__realloc(void *p, size_t size);
PFVM_INTERNAL void pfvm__free(void *p);
PFVM_INTERNAL void *pfvm__malloc(size_t size);
PFVM_INTERNAL void *pfvm__calloc(size_t n, size_t size);
/* Tensor storage: PFVM_DATA_ALIGN-aligned (zeroed when `zero`), from the
 * same allocator; freed only with pfvm__data_free. */
PFVM_INTERNAL void *pfvm__data_alloc(size_t size, int zero);
PFVM_INTERNAL void pfvm__data_free(void *p);
PFVM_INTERNAL char *pfvm__strdup(const char *s);
PFVM_INTERNAL char *pfvm__strndup(const char *s, size_t n);

/* Sets *st (if non-NULL) and returns code. printf-style message. */
PFVM_INTERNAL pfvm_code pfvm__fail(pfvm_status *st, pfvm_code code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
PFVM_INTERNAL void pfvm__ok(pfvm_status *st);
/* Prepends "prefix: " to an existing message (for context such as a node). */
PFVM_INTERNAL void pfvm__prefix(pfvm_status *st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
PFVM_INTERNAL int pfvm__vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
PFVM_INTERNAL int pfvm__snprintf(char *buf, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* pfvm:internal-begin */
#ifdef PFVM_TERSE_MESSAGES
/* pfvm__fail in a PFVM_TERSE_MESSAGES build: "<code name> (file:line)". */
PFVM_INTERNAL pfvm_code pfvm__fail_at(pfvm_status *st, pfvm_code code, const char *file, int line);
/* The message's format and arguments stay only inside an unevaluated
 * sizeof: no format string is linked, and variables that only a message
 * read still count as used. pfvm__terse_args is never defined. */
int pfvm__terse_args(const char *fmt, ...);
#define PFVM__TERSE_LINE(...) (__LINE__ + 0 * (int)sizeof(pfvm__terse_args(__VA_ARGS__)))
#define pfvm__fail(st, code, ...) pfvm__fail_at((st), (code), __FILE__, PFVM__TERSE_LINE(__VA_ARGS__))
#define PFVM__MSG_DETAIL 0 /* work done only for a message's arguments can go */
#else
#define PFVM__MSG_DETAIL 1
#endif
/* pfvm:internal-end */

/* Checked arithmetic: return 0 on overflow, 1 on success. */
PFVM_INTERNAL int pfvm__mul_size(size_t a, size_t b, size_t *out);
PFVM_INTERNAL int pfvm__add_size(size_t a, size_t b, size_t *out);
PFVM_INTERNAL int pfvm__mul_i64(int64_t a, int64_t b, int64_t *out);
PFVM_INTERNAL int pfvm__add_i64(int64_t a, int64_t b, int64_t *out);
/* a * b, or UINT64_MAX past it (work counts: pfvm_kctx_spend). */
PFVM_INTERNAL uint64_t pfvm__sat_mul(uint64_t a, uint64_t b);

/* The stb_ds array `a` (elements of elemsize bytes) with room for at least
 * mincap elements: the same array, or a new one that replaces it; on
 * overflow or when the allocator fails, `a` unchanged (callers compare the
 * capacity: pfvm__arrreserve). */
PFVM_INTERNAL void *pfvm__arr_grow(void *a, size_t elemsize, size_t mincap);
/* pfvm:internal-begin */
#ifdef __cplusplus
/* C++ converts no void * implicitly: the same growth, typed. */
extern "C++" {
template <class T> static inline T *pfvm__arr_grow_typed(T *a, size_t elemsize, size_t mincap)
{
    return (T *)pfvm__arr_grow(a, elemsize, mincap);
}
}
#define PFVM__ARR_GROW(a, elemsize, mincap) pfvm__arr_grow_typed((a), (elemsize), (mincap))
#else
#define PFVM__ARR_GROW(a, elemsize, mincap) pfvm__arr_grow((a), (elemsize), (mincap))
#endif
/* pfvm:internal-end */

/* ---- hash map: string or pointer keys to pointers ------------------------ */

/* Open addressing; keys are not copied (a string key must outlive its
 * entry). Replaces stb_ds's hash maps, whose growth writes through a failed
 * realloc's NULL and whose string arena indexes past its declared array.
 * Zero-initialized it is an empty pointer-keyed map; pfvm__map_init(m, 1)
 * makes a string-keyed one. */
typedef struct pfvm__map_slot {
    const void *key; /* NULL: empty; &pfvm__map_tomb: deleted */
    void *val;
} pfvm__map_slot;
typedef struct pfvm__map {
    pfvm__map_slot *slots;
    size_t cap, used, n; /* used: live entries and tombstones */
    int strkeys;
} pfvm__map;
PFVM_INTERNAL void pfvm__map_init(pfvm__map *m, int strkeys);
/* 1 and *val (if val) when key is present, else 0. */
PFVM_INTERNAL int pfvm__map_get(const pfvm__map *m, const void *key, void **val);
/* Adds or replaces (the entry then keeps the new key pointer); 0 when out
 * of memory (the map unchanged). */
PFVM_INTERNAL int pfvm__map_put(pfvm__map *m, const void *key, void *val);
PFVM_INTERNAL void pfvm__map_del(pfvm__map *m, const void *key);
PFVM_INTERNAL void pfvm__map_free(pfvm__map *m);

/* ---- arena: chunked bump allocation freed all at once ------------------ */

typedef struct pfvm__chunk pfvm__chunk;
typedef struct pfvm_arena {
    pfvm__chunk *head;
    size_t total;
    /* a block's least size when not 0 (else PFVM_ARENA_CHUNK): a scratch
     * arena that needs little, freed and made again many times, leaves
     * small holes in the heap instead of 16 KB ones that the allocations
     * between its uses carve up (each next block then grows the heap) */
    size_t chunk;
} pfvm_arena;

/* Zeroed, 16-byte aligned memory owned by the arena; NULL on failure. */
PFVM_INTERNAL void *pfvm__arena_alloc(pfvm_arena *a, size_t size);
PFVM_INTERNAL char *pfvm__arena_strdup(pfvm_arena *a, const char *s);
PFVM_INTERNAL char *pfvm__arena_strndup(pfvm_arena *a, const char *s, size_t n);
PFVM_INTERNAL void pfvm__arena_free(pfvm_arena *a);

#ifdef __cplusplus
}
#endif
#endif /* PFVM_BASE_H */
