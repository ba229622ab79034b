/* ops_common: helpers shared between operator families (declared here,
 * defined in the family that owns them). */
#ifndef PFVM_OPS_COMMON_H
#define PFVM_OPS_COMMON_H

#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* (filled in as families share code) */

#ifdef __cplusplus
}
#endif
#endif /* PFVM_OPS_COMMON_H */
