/*
 * IEEE 754 binary16, bfloat16 and tf32 conversions from and to binary32, on the bits,
 * and the sizes and kinds of the element types.
 *
 * Done by hand rather than with _Float16 or __bf16 so the results do not depend on the
 * compiler, the target or the floating-point environment: the reference and the tests need
 * the exact results of the GPU's conversions: cvt.rn.f16.f32 and cvt.rn.bf16.f32 (round to
 * nearest even) and cvt.rna.tf32.f32 (round to nearest, ties away from zero).
 */
#include "tcc/base.h"

#include <stdbool.h>
#include <string.h>

#define F16_EXP_MAX 31
#define F32_EXP_BIAS 127
#define F16_EXP_BIAS 15

/* Shifts `mantissa` right by `shift` (1..31) and rounds the result to nearest, ties to even. */
static uint32_t shift_round_even(uint32_t mantissa, int shift)
{
    uint32_t result = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (result & 1)))
        result++;
    return result;
}

uint16_t tcc_f32_to_f16(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000);
    int exponent = (int)((bits >> 23) & 0xff);
    uint32_t mantissa = bits & 0x7fffff;

    if (exponent == 0xff) {
        if (mantissa == 0)
            return sign | 0x7c00; /* infinity */
        /* NaN: keep the top of the payload; a payload that would vanish becomes quiet. */
        uint16_t payload = (uint16_t)(mantissa >> 13);
        return sign | 0x7c00 | (payload ? payload : 0x200);
    }
    int half_exponent = exponent - F32_EXP_BIAS + F16_EXP_BIAS;
    if (half_exponent >= F16_EXP_MAX)
        return sign | 0x7c00; /* too large: overflows to infinity */
    if (half_exponent <= 0) {
        /* A half subnormal (or zero): the value in units of 2^-24, the smallest subnormal.
         * Below 2^-25 (half_exponent < -10) even rounding up cannot reach 2^-24. */
        if (half_exponent < -10)
            return sign;
        uint32_t full = mantissa | 0x800000; /* the implicit leading one */
        /* A result of 0x400 is the smallest normal: the carry lands in the exponent. */
        return sign | (uint16_t)shift_round_even(full, 14 - half_exponent);
    }
    /* Normal: round the 23-bit mantissa to 10 bits; a carry out of the mantissa
     * increments the exponent, and out of exponent 30 it gives infinity (0x7c00). */
    uint32_t half = ((uint32_t)half_exponent << 10) | (mantissa >> 13);
    uint32_t rest = mantissa & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
        half++;
    return sign | (uint16_t)half;
}

float tcc_f16_to_f32(uint16_t bits)
{
    uint32_t sign = (uint32_t)(bits & 0x8000) << 16;
    int exponent = (bits >> 10) & 0x1f;
    uint32_t mantissa = bits & 0x3ff;
    uint32_t result;

    if (exponent == F16_EXP_MAX) {
        result = sign | 0x7f800000 | (mantissa << 13); /* infinity or NaN, payload kept */
    } else if (exponent != 0) {
        result =
            sign | ((uint32_t)(exponent - F16_EXP_BIAS + F32_EXP_BIAS) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
        result = sign; /* signed zero */
    } else {
        /* Subnormal: normalize, as every half subnormal is a float normal. */
        int shift = 0;
        while (!(mantissa & 0x400)) {
            mantissa <<= 1;
            shift++;
        }
        result = sign | ((uint32_t)(1 - F16_EXP_BIAS + F32_EXP_BIAS - shift) << 23) |
                 ((mantissa & 0x3ff) << 13);
    }
    float value;
    memcpy(&value, &result, sizeof value);
    return value;
}

/* bfloat16 is the top half of a binary32: same sign and exponent, 7 mantissa bits. */
uint16_t tcc_f32_to_bf16(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    if ((bits & 0x7fffffff) > 0x7f800000) {
        /* NaN: keep the sign and the top of the payload, and set the quiet bit so that a
         * payload lying only in the dropped bits does not turn the NaN into infinity. */
        return (uint16_t)((bits >> 16) | 0x40);
    }
    /* Round the low 16 bits to nearest, ties to even. A carry out of the mantissa moves
     * into the exponent, which is the right result, up to infinity for the largest floats. */
    uint32_t round = 0x7fff + ((bits >> 16) & 1);
    return (uint16_t)((bits + round) >> 16);
}

float tcc_bf16_to_f32(uint16_t bits)
{
    uint32_t wide = (uint32_t)bits << 16; /* exact: every bfloat16 is a binary32 */
    float value;
    memcpy(&value, &wide, sizeof value);
    return value;
}

/* tf32 keeps the binary32 sign and exponent and 10 mantissa bits: the low 13 bits become 0. */
float tcc_f32_to_tf32(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    if ((bits & 0x7f800000) == 0x7f800000) {
        /* Infinity stays; a NaN stays a NaN even when its payload is only in the low bits. */
        bool nan = (bits & 0x7fffff) != 0;
        bits &= ~0x1fffu;
        if (nan)
            bits |= 0x400000; /* quiet */
    } else {
        /* Adding half a unit of the kept mantissa rounds the magnitude to nearest with ties
         * away from zero (the sign bit is untouched); carries into the exponent are right,
         * for subnormals becoming normal and for the largest floats becoming infinity. */
        bits = (bits + 0x1000) & ~0x1fffu;
    }
    memcpy(&value, &bits, sizeof value);
    return value;
}

bool tcc_dtype_is_float(tcc_dtype type)
{
    return type == TCC_FLOAT16 || type == TCC_BFLOAT16 || type == TCC_FLOAT32;
}

size_t tcc_dtype_size(tcc_dtype type)
{
    switch (type) {
    case TCC_BOOL:
    case TCC_INT8:
        return 1;
    case TCC_FLOAT16:
    case TCC_BFLOAT16:
        return 2;
    case TCC_INT32:
    case TCC_FLOAT32:
        return 4;
    case TCC_VOID:
        break;
    }
    return 0;
}
