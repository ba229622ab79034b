/* The library's one implementation file in the firmware build: the
 * amalgamated headers as a firmware user compiles them (no stdio: models
 * load from memory; no ONNX writer). Kept apart from main.c so that the
 * linker map attributes pfvm's code and rodata to this object. */
#define PFVM_IMPLEMENTATION
#define PFVM_NO_STDIO
#define PFVM_NO_ONNX_WRITER
#include "pfvm_onnx.h"
