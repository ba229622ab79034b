/* onnx: reading and writing ONNX protobuf with nanopb.
 *
 * The reader walks the wire format with nanopb's stream functions and the
 * field tags generated from onnx.proto (src/onnx/onnx.pb.h), building pfvm's
 * IR directly: no intermediate message structs, no fixed size limits.
 * Initializers stored as raw_data are used in place when aligned (zero-copy):
 * the model then points into the caller's bytes, which must outlive it,
 * unless PFVM_LOAD_COPY is given. Any malformed input is a clear error. */
#ifndef PFVM_ONNX_IO_H
#define PFVM_ONNX_IO_H

#include "../ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* pfvm_onnx_load_memory flags */
#define PFVM_LOAD_COPY 1u /* copy the bytes: the caller may free them after loading */

/* Parses a ModelProto. Returns NULL and sets *st on error. */
PFVM_API pfvm_model *pfvm_onnx_load_memory(const void *bytes, size_t size, unsigned flags, pfvm_status *st);

/* Reads a TensorProto, SequenceProto or OptionalProto (a .pb file's bytes
 * do not say which: `hint` is the expected kind; PFVM_KIND_UNKNOWN means a
 * tensor). The result is a heap tensor the caller frees with
 * pfvm_tensor_free; its data is copied. */
PFVM_API pfvm_tensor *pfvm_onnx_read_value(const void *bytes, size_t size, pfvm_kind hint, pfvm_status *st);

#ifndef PFVM_NO_ONNX_WRITER
/* Serialises a model (bytes from pfvm's allocator: free with
 * pfvm_onnx_free). Symbolic dims that are expressions are written as
 * dim_param with their printed form. */
PFVM_API pfvm_code pfvm_onnx_save_memory(const pfvm_model *m, void **bytes, size_t *size, pfvm_status *st);
/* Serialises a tensor, sequence or optional as TensorProto, SequenceProto
 * or OptionalProto. */
PFVM_API pfvm_code pfvm_onnx_write_value(const pfvm_tensor *t, void **bytes, size_t *size, pfvm_status *st);
#endif
PFVM_API void pfvm_onnx_free(void *bytes);

#ifndef PFVM_NO_STDIO
/* Reads a model file; the model keeps its own copy of the bytes and
 * resolves external data relative to the file's directory. */
PFVM_API pfvm_model *pfvm_onnx_load_file(const char *path, unsigned flags, pfvm_status *st);
PFVM_API pfvm_tensor *pfvm_onnx_read_value_file(const char *path, pfvm_kind hint, pfvm_status *st);
#ifndef PFVM_NO_ONNX_WRITER
PFVM_API pfvm_code pfvm_onnx_save_file(const pfvm_model *m, const char *path, pfvm_status *st);
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
