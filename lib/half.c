/*
 * IEEE 754 binary16 <-> binary32 conversions, on the bits.
 *
 * Done by hand rather than with _Float16 so the results do not depend on the compiler,
 * the target or the floating-point environment: the reference and the tests need the
 * exact round-to-nearest-even results that the GPU's cvt.rn.f16.f32 produces.
 */
#include "tcc/tcc.h"

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
