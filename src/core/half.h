/* float16 (IEEE binary16) and bfloat16 conversions, branch-free so loops over
 * them vectorise. Round to nearest even; NaN stays NaN; overflow gives inf. */
#ifndef COLL_HALF_H
#define COLL_HALF_H

#include <stdint.h>

float    coll_half_to_float(uint16_t h);
uint16_t coll_float_to_half(float f);
float    coll_bf16_to_float(uint16_t h);
uint16_t coll_float_to_bf16(float f);

#endif
