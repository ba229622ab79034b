/* onnx: reading and writing ONNX protobuf with nanopb.
 *
 * The reader walks the wire format with nanopb's stream functions and the
 * field tags generated from onnx.proto (src/onnx/onnx.pb.h), building pfvm's
 * IR directly: no intermediate message structs, no fixed size limits. Every
 * malformed input gives an error status whose message names what is wrong
 * (the node, its op, the field); nothing is read out of bounds, every size
 * is checked against the bytes that hold it before it is allocated, and
 * nesting (subgraphs, types, sequences) is bounded.
 *
 * Zero-copy: initializers stored as raw_data whose bytes are aligned for
 * their element type (on a little-endian host) are viewed in place, so the
 * model points into the caller's bytes, which must then outlive it; with
 * PFVM_LOAD_COPY the model keeps its own copy. Everything else (typed
 * fields, unaligned raw_data, sparse and external data) is converted into
 * memory the model owns.
 *
 * The writer emits everything the reader reads; load -> save -> load gives
 * the same model (nodes, attributes, initializer bytes, types, functions,
 * metadata), and a second save the same bytes.
 *
 * Configuration:
 *   PFVM_NO_STDIO               no file functions (memory only)
 *   PFVM_NO_ONNX_WRITER         no writer
 *   PFVM_ONNX_MAX_SPARSE_BYTES  largest dense size of a sparse tensor (1 GiB)
 *   PFVM_ONNX_WRITE_ALIGN       the writer puts every tensor's raw_data at a
 *                               file offset that is a multiple of this
 *                               (default: PFVM_DATA_ALIGN, at least 16), by
 *                               padding before it with a TensorProto
 *                               doc_string: models saved by pfvm (`interp
 *                               opt`) load with their weights viewed in
 *                               place (in flash) when their bytes are so
 *                               aligned in memory; 0 writes no padding
 *   PFVM_ONNX_PB_DESCRIPTORS    also compile nanopb's message descriptors
 *                               for the generated structs (pfvm needs none) */
#ifndef PFVM_ONNX_IO_H
#define PFVM_ONNX_IO_H

#include "../ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sparse tensors are stored densified; their dims may describe far more
 * than the file holds, so this bounds what a corrupted file can ask for. */
#ifndef PFVM_ONNX_MAX_SPARSE_BYTES
#define PFVM_ONNX_MAX_SPARSE_BYTES ((size_t)1 << 30)
#endif

/* Alignment of raw_data in the files the writer saves (0 or 1: none; else
 * a power of two up to 128). */
#ifndef PFVM_ONNX_WRITE_ALIGN
#define PFVM_ONNX_WRITE_ALIGN (PFVM_DATA_ALIGN > 16 ? PFVM_DATA_ALIGN : 16)
#endif

/* pfvm_onnx_load_memory / pfvm_onnx_load_file flags */
#define PFVM_LOAD_COPY 1u /* copy the bytes: the caller may free them after loading */

/* Parses a ModelProto from `size` bytes: the main graph with its subgraphs
 * (each If/Loop/Scan body is a pfvm_graph whose parent is the enclosing
 * graph, so outer-scope names resolve through pfvm_graph_find), the
 * model-local functions, opset imports, metadata and doc strings. Graphs
 * are sorted topologically. Dims: dim_value -> constant, dim_param -> the
 * symbol of that name, neither -> a fresh symbol "<value>_d<i>".
 * Without PFVM_LOAD_COPY, aligned raw_data initializers point into `bytes`,
 * which the caller keeps alive (and unchanged) while the model lives.
 * External data cannot be read from memory (no directory): use
 * pfvm_onnx_load_file. Returns NULL and sets *st (which may be NULL) on
 * error; free the model with pfvm_model_free. */
PFVM_API pfvm_model *pfvm_onnx_load_memory(const void *bytes, size_t size, unsigned flags, pfvm_status *st);

/* How to load a model; a zero-initialized desc gives the defaults. */
typedef struct pfvm_onnx_load_desc {
    unsigned flags;        /* PFVM_LOAD_* */
    pfvm_model_desc model; /* the model's allocator (serves the copied or read bytes too) */
} pfvm_onnx_load_desc;
/* pfvm_onnx_load_memory / pfvm_onnx_load_file with a desc (NULL: zero). */
PFVM_API pfvm_model *pfvm_onnx_load_memory_desc(const void *bytes, size_t size, const pfvm_onnx_load_desc *desc,
                                                pfvm_status *st);

/* Reads a value file: a TensorProto, SequenceProto or OptionalProto, as
 * the ONNX backend tests store inputs and outputs. The bytes do not say
 * which message they hold, so `hint` is the kind expected (from the graph
 * input's or output's type): PFVM_KIND_SEQUENCE or PFVM_KIND_OPTIONAL for
 * those, PFVM_KIND_TENSOR or PFVM_KIND_UNKNOWN for a tensor. The result is
 * a heap tensor that owns everything (data, strings, elements; its kind is
 * TENSOR, SEQUENCE or OPTIONAL): free it with pfvm_tensor_free. NULL and
 * *st set on error. */
PFVM_API pfvm_tensor *pfvm_onnx_read_value(const void *bytes, size_t size, pfvm_kind hint, pfvm_status *st);

#ifndef PFVM_NO_ONNX_WRITER
/* Serialises a model as a ModelProto into *bytes / *size (memory from
 * pfvm's allocator: free with pfvm_onnx_free). Initializers are written as
 * little-endian raw_data (strings as string_data), dims as dim_value for
 * constants, dim_param for symbols (their name) and for other expressions
 * (their printed form, "2*n"), and value_info for the values whose
 * has_value_info is set. Fails, naming the node and field, when the IR
 * holds what ONNX cannot say (a tensor without data, a NULL list). */
PFVM_API pfvm_code pfvm_onnx_save_memory(const pfvm_model *m, void **bytes, size_t *size, pfvm_status *st);
/* Serialises a value file: a tensor as TensorProto, a sequence as
 * SequenceProto, an optional as OptionalProto (bytes as above). */
PFVM_API pfvm_code pfvm_onnx_write_value(const pfvm_tensor *t, void **bytes, size_t *size, pfvm_status *st);
#endif
/* Frees bytes from pfvm_onnx_save_memory, pfvm_onnx_write_value or
 * pfvm_onnx_read_file (NULL is fine). */
PFVM_API void pfvm_onnx_free(void *bytes);

#ifndef PFVM_NO_STDIO
/* Reads a model file. The model keeps the file's bytes (its weights view
 * them in place) and its directory (model->dir), against which external
 * data is read: locations must be relative and stay inside that directory,
 * and each tensor's offset and length must lie within its file.
 * PFVM_LOAD_COPY changes nothing here. NULL and *st set on error (the
 * message starts with the path). */
PFVM_API pfvm_model *pfvm_onnx_load_file(const char *path, unsigned flags, pfvm_status *st);
PFVM_API pfvm_model *pfvm_onnx_load_file_desc(const char *path, const pfvm_onnx_load_desc *desc, pfvm_status *st);
/* pfvm_onnx_read_value on the contents of a file. */
PFVM_API pfvm_tensor *pfvm_onnx_read_value_file(const char *path, pfvm_kind hint, pfvm_status *st);
#ifndef PFVM_NO_ONNX_WRITER
/* pfvm_onnx_save_memory into a file. */
PFVM_API pfvm_code pfvm_onnx_save_file(const pfvm_model *m, const char *path, pfvm_status *st);
/* pfvm_onnx_write_value into a file. */
PFVM_API pfvm_code pfvm_onnx_write_value_file(const pfvm_tensor *t, const char *path, pfvm_status *st);
#endif
/* Reads a whole file into memory from pfvm's allocator (free with
 * pfvm_onnx_free). */
PFVM_API pfvm_code pfvm_onnx_read_file(const char *path, void **bytes, size_t *size, pfvm_status *st);
#endif

#ifdef __cplusplus
}
#endif
#endif /* PFVM_ONNX_IO_H */
