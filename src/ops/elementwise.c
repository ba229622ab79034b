/* ops/elementwise: (being written) */
#include "registry.h"

const pfvm_op_def pfvm__ops_elementwise[] = {
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0}
};
