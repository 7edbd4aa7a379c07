/*
 * Internal helpers shared by the conv2d reference (conv2d_reference.c) and the conv2d
 * compute definition.
 */
#ifndef TCC_CONV2D_H
#define TCC_CONV2D_H

#include "tcc/tcc.h"

/* Checks a descriptor: every size >= 1 (pads >= 0), batch, in_channels and out_channels
 * multiples of 16 for the NHWCnc layout, a non-empty output, float16 inputs and a float32
 * output, and element counts that fit int64. On failure the one-line message names the
 * bad field; bad values give TCC_ERROR_INVALID_ARGUMENT, other types TCC_ERROR_UNSUPPORTED. */
tcc_status tcc_conv2d_validate(tcc_context *ctx, const tcc_conv2d_desc *desc);

#endif
