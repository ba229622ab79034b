/* pfvm's implementation, alone in its file: the program's other files
 * include the headers for the API only and rebuild quickly. */
#define PFVM_IMPLEMENTATION
#include "pfvm_onnx.h"
