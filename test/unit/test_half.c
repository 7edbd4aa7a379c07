/*
 * tcc_f32_to_f16 / tcc_f16_to_f32 and tcc_f32_to_bf16 / tcc_bf16_to_f32: exhaustive over
 * the 16-bit patterns, and over every rounding boundary between two adjacent values.
 * tcc_f32_to_tf32 against an independent rounding in double. tcc_dtype_size.
 */
#include "support.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

static uint32_t float_bits(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static float float_of_bits(uint32_t bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* A 16-bit float format as its definition gives it, independently of half.c: a sign bit,
 * the exponent (biased by half its largest value), then `mantissa_bits` mantissa bits;
 * and the library's conversions to and from float. */
typedef struct Format16 {
    int mantissa_bits;
    float (*to_f32)(uint16_t bits);
    uint16_t (*from_f32)(float value);
    uint16_t largest; /* the bits of the largest finite value */
} Format16;

static const Format16 f16_format = {10, tcc_f16_to_f32, tcc_f32_to_f16, 0x7bff};
static const Format16 bf16_format = {7, tcc_bf16_to_f32, tcc_f32_to_bf16, 0x7f7f};

static bool is_nan16(const Format16 *f, uint16_t bits)
{
    uint16_t mantissa = (uint16_t)((1u << f->mantissa_bits) - 1), exponent = 0x7fff & ~mantissa;
    return (bits & exponent) == exponent && (bits & mantissa) != 0;
}

static bool half_is_nan(uint16_t bits)
{
    return is_nan16(&f16_format, bits);
}

/* The value of bits in format f. */
static double value16(const Format16 *f, uint16_t bits)
{
    int largest_exponent = (1 << (15 - f->mantissa_bits)) - 1, bias = largest_exponent / 2;
    int exponent = (bits >> f->mantissa_bits) & largest_exponent;
    int mantissa = bits & ((1 << f->mantissa_bits) - 1);
    double sign = (bits & 0x8000) ? -1.0 : 1.0;
    if (exponent == largest_exponent)
        return mantissa ? NAN : sign * INFINITY;
    if (exponent == 0) /* subnormal: the unit of the smallest normal's last bit */
        return sign * ldexp(mantissa, 1 - bias - f->mantissa_bits);
    return sign * ldexp((1 << f->mantissa_bits) + mantissa, exponent - bias - f->mantissa_bits);
}

/* Every 16-bit pattern converts to its value (a NaN to a NaN), keeping its sign: -0 stays
 * -0. */
static void check_every_value(const Format16 *f)
{
    for (uint32_t bits = 0; bits < 65536; bits++) {
        float value = f->to_f32((uint16_t)bits);
        double expected = value16(f, (uint16_t)bits);
        if (is_nan16(f, (uint16_t)bits))
            ck_assert_msg(isnan(value), "0x%04x should be NaN", bits);
        else
            ck_assert_msg((double)value == expected, "0x%04x -> %a, expected %a", bits,
                          (double)value, expected);
        ck_assert_int_eq(signbit(value) != 0, (bits & 0x8000) != 0);
    }
}

/* Every pattern converted to float and back is itself; a NaN stays a NaN of the same sign
 * (the payload is not promised). */
static void check_every_round_trip(const Format16 *f)
{
    for (uint32_t bits = 0; bits < 65536; bits++) {
        uint16_t back = f->from_f32(f->to_f32((uint16_t)bits));
        if (is_nan16(f, (uint16_t)bits)) {
            ck_assert_msg(is_nan16(f, back), "0x%04x -> 0x%04x is not NaN", bits, back);
            ck_assert_int_eq(back & 0x8000, bits & 0x8000);
        } else {
            ck_assert_msg(back == bits, "0x%04x -> 0x%04x", bits, back);
        }
    }
}

/* Every boundary: the midpoint of two adjacent finite values goes to the even one, and the
 * floats just below and above it go to the nearer one. */
static void check_every_midpoint(const Format16 *f)
{
    for (uint16_t bits = 0; bits < f->largest; bits++) {
        float low = f->to_f32(bits), high = f->to_f32((uint16_t)(bits + 1));
        /* Exact (12 significant bits at most); low + high would overflow at bfloat16's top. */
        float middle = low + (high - low) / 2;
        uint16_t even = (bits & 1) ? (uint16_t)(bits + 1) : bits;
        ck_assert_msg(f->from_f32(middle) == even, "midpoint after 0x%04x", bits);
        ck_assert_uint_eq(f->from_f32(nextafterf(middle, 0)), bits);
        ck_assert_uint_eq(f->from_f32(nextafterf(middle, INFINITY)), bits + 1);
        ck_assert_uint_eq(f->from_f32(-middle), even | 0x8000);
    }
}

/* Defines `static uint16_t name(float)`: the compiler's conversion to the 16-bit `type`,
 * as bits (for the types this compiler has). */
#define COMPILER_CONVERSION(name, type)                                                            \
    static uint16_t name(float value)                                                              \
    {                                                                                              \
        volatile type converted = (type)value;                                                     \
        uint16_t bits;                                                                             \
        memcpy(&bits, (const void *)&converted, sizeof bits);                                      \
        return bits;                                                                               \
    }

#ifdef __FLT16_MAX__
COMPILER_CONVERSION(compiler_f16, _Float16)
#endif
#ifdef __BFLT16_MAX__
COMPILER_CONVERSION(compiler_bf16, __bf16)
#endif

#if defined(__FLT16_MAX__) || defined(__BFLT16_MAX__)
/* Fails unless f's conversion from float agrees with the compiler's (`compiler`, which
 * rounds to nearest even) on a million random floats of every magnitude. */
static void check_agrees(const Format16 *f, uint16_t (*compiler)(float value), uint64_t seed)
{
    uint64_t state = seed;
    for (int i = 0; i < 1000000; i++) {
        float value = float_of_bits((uint32_t)test_random(&state));
        if (isnan(value))
            continue;
        uint16_t expected = compiler(value);
        ck_assert_msg(f->from_f32(value) == expected, "%a: 0x%04x, expected 0x%04x", (double)value,
                      f->from_f32(value), expected);
    }
}
#endif

START_TEST(test_every_half_converts_to_its_value)
{
    check_every_value(&f16_format);
}
END_TEST

START_TEST(test_every_half_round_trips)
{
    check_every_round_trip(&f16_format);
}
END_TEST

START_TEST(test_known_values)
{
    ck_assert_uint_eq(tcc_f32_to_f16(1.0f), 0x3c00);
    ck_assert_uint_eq(tcc_f32_to_f16(-2.0f), 0xc000);
    ck_assert_uint_eq(tcc_f32_to_f16(0.5f), 0x3800);
    ck_assert_uint_eq(tcc_f32_to_f16(65504.0f), 0x7bff);       /* the largest half */
    ck_assert_uint_eq(tcc_f32_to_f16(1.0f / 3.0f), 0x3555);    /* 0.333251953125 */
    ck_assert_uint_eq(tcc_f32_to_f16(0.1f), 0x2e66);           /* 0.0999755859375 */
    ck_assert_uint_eq(tcc_f32_to_f16(ldexpf(1, -14)), 0x0400); /* the smallest normal */
    ck_assert_uint_eq(tcc_f32_to_f16(0.0f), 0x0000);
    ck_assert_uint_eq(tcc_f32_to_f16(-0.0f), 0x8000);
    ck_assert(tcc_f16_to_f32(0x3c00) == 1.0f);
    ck_assert(tcc_f16_to_f32(0x7bff) == 65504.0f);
    ck_assert(tcc_f16_to_f32(0xc000) == -2.0f);
}
END_TEST

START_TEST(test_subnormals)
{
    ck_assert_uint_eq(tcc_f32_to_f16(ldexpf(1, -24)), 0x0001); /* the smallest subnormal */
    ck_assert_uint_eq(tcc_f32_to_f16(ldexpf(1023, -24)), 0x03ff);
    ck_assert_uint_eq(tcc_f32_to_f16(-ldexpf(5, -24)), 0x8005);
    ck_assert(tcc_f16_to_f32(0x0001) == ldexpf(1, -24));
    ck_assert(tcc_f16_to_f32(0x03ff) == ldexpf(1023, -24));
    ck_assert(tcc_f16_to_f32(0x8200) == -ldexpf(1, -15));
    /* Half of the smallest subnormal is a tie between 0 and 1 unit: even, so 0. */
    ck_assert_uint_eq(tcc_f32_to_f16(ldexpf(1, -25)), 0x0000);
    ck_assert_uint_eq(tcc_f32_to_f16(-ldexpf(1, -25)), 0x8000);
    ck_assert_uint_eq(tcc_f32_to_f16(nextafterf(ldexpf(1, -25), 1)), 0x0001);
    ck_assert_uint_eq(tcc_f32_to_f16(ldexpf(1, -26)), 0x0000);
    ck_assert_uint_eq(tcc_f32_to_f16(ldexpf(3, -25)), 0x0002); /* 1.5 units: tie to 2 */
    ck_assert_uint_eq(tcc_f32_to_f16(ldexpf(5, -25)), 0x0002); /* 2.5 units: tie to 2 */
    /* Between the largest subnormal and the smallest normal: ties to 0x400 (even). */
    ck_assert_uint_eq(tcc_f32_to_f16(ldexpf(2047, -25)), 0x0400);
    /* A float subnormal is far below the half range. */
    ck_assert_uint_eq(tcc_f32_to_f16(1e-40f), 0x0000);
    ck_assert_uint_eq(tcc_f32_to_f16(-1e-40f), 0x8000);
}
END_TEST

START_TEST(test_rounding_to_nearest_even)
{
    float ulp = ldexpf(1, -10);                                    /* of a half in [1, 2) */
    ck_assert_uint_eq(tcc_f32_to_f16(1.0f + ulp / 2), 0x3c00);     /* tie: down to even */
    ck_assert_uint_eq(tcc_f32_to_f16(1.0f + 3 * ulp / 2), 0x3c02); /* tie: up to even */
    ck_assert_uint_eq(tcc_f32_to_f16(nextafterf(1.0f + ulp / 2, 2)), 0x3c01);
    ck_assert_uint_eq(tcc_f32_to_f16(nextafterf(1.0f + ulp / 2, 0)), 0x3c00);
    ck_assert_uint_eq(tcc_f32_to_f16(-(1.0f + 3 * ulp / 2)), 0xbc02);
    /* A carry out of the mantissa moves to the next binade. */
    ck_assert_uint_eq(tcc_f32_to_f16(nextafterf(2.0f, 0)), 0x4000);
}
END_TEST

START_TEST(test_every_midpoint)
{
    check_every_midpoint(&f16_format);
}
END_TEST

START_TEST(test_overflow_and_infinity)
{
    ck_assert_uint_eq(tcc_f32_to_f16(65519.0f), 0x7bff);
    ck_assert_uint_eq(tcc_f32_to_f16(65520.0f), 0x7c00); /* tie with 65536: even is inf */
    ck_assert_uint_eq(tcc_f32_to_f16(1e10f), 0x7c00);
    ck_assert_uint_eq(tcc_f32_to_f16(FLT_MAX), 0x7c00);
    ck_assert_uint_eq(tcc_f32_to_f16(-FLT_MAX), 0xfc00);
    ck_assert_uint_eq(tcc_f32_to_f16(INFINITY), 0x7c00);
    ck_assert_uint_eq(tcc_f32_to_f16(-INFINITY), 0xfc00);
    ck_assert(isinf(tcc_f16_to_f32(0x7c00)) && tcc_f16_to_f32(0x7c00) > 0);
    ck_assert(isinf(tcc_f16_to_f32(0xfc00)) && tcc_f16_to_f32(0xfc00) < 0);
}
END_TEST

START_TEST(test_nan)
{
    ck_assert(half_is_nan(tcc_f32_to_f16(NAN)));
    ck_assert(half_is_nan(tcc_f32_to_f16(-NAN)));
    ck_assert_uint_eq(tcc_f32_to_f16(-NAN) & 0x8000, 0x8000);
    /* A float NaN whose payload lies only in the bits a half drops is still a NaN. */
    uint32_t low_payload = 0x7f800001;
    float value;
    memcpy(&value, &low_payload, sizeof value);
    ck_assert(half_is_nan(tcc_f32_to_f16(value)));
    ck_assert(isnan(tcc_f16_to_f32(0x7e00)));
    ck_assert(isnan(tcc_f16_to_f32(0x7c01)));
    ck_assert_uint_eq(float_bits(tcc_f16_to_f32(0x7e00)) & 0x7fc00000, 0x7fc00000);
}
END_TEST

/* Where the compiler has _Float16, its conversion must agree. */
START_TEST(test_agrees_with_compiler)
{
#ifdef __FLT16_MAX__
    check_agrees(&f16_format, compiler_f16, 42);
#endif
}
END_TEST

/* ---- bfloat16 ------------------------------------------------------------------------- */

static bool bf16_is_nan(uint16_t bits)
{
    return is_nan16(&bf16_format, bits);
}

START_TEST(test_every_bf16_converts_to_its_value)
{
    check_every_value(&bf16_format);
}
END_TEST

START_TEST(test_every_bf16_round_trips)
{
    check_every_round_trip(&bf16_format);
}
END_TEST

START_TEST(test_bf16_rounding_to_nearest_even)
{
    float ulp = ldexpf(1, -7); /* of a bf16 in [1, 2) */
    ck_assert_uint_eq(tcc_f32_to_bf16(1.0f), 0x3f80);
    ck_assert_uint_eq(tcc_f32_to_bf16(1.0f + ulp / 2), 0x3f80);     /* tie: down to even */
    ck_assert_uint_eq(tcc_f32_to_bf16(1.0f + 3 * ulp / 2), 0x3f82); /* tie: up to even */
    ck_assert_uint_eq(tcc_f32_to_bf16(nextafterf(1.0f + ulp / 2, 2)), 0x3f81);
    ck_assert_uint_eq(tcc_f32_to_bf16(-(1.0f + 3 * ulp / 2)), 0xbf82);
    ck_assert_uint_eq(tcc_f32_to_bf16(nextafterf(2.0f, 0)), 0x4000); /* carry: next binade */
    ck_assert_uint_eq(tcc_f32_to_bf16(1.0f / 3.0f), 0x3eab);         /* 0.333984375 */
    ck_assert_uint_eq(tcc_f32_to_bf16(-0.0f), 0x8000);
    /* Subnormals round in units of 2^-133 (bits 0x8000 of a float). */
    ck_assert_uint_eq(tcc_f32_to_bf16(float_of_bits(0x00008000)), 0x0000); /* tie to even 0 */
    ck_assert_uint_eq(tcc_f32_to_bf16(float_of_bits(0x00008001)), 0x0001);
    ck_assert_uint_eq(tcc_f32_to_bf16(float_of_bits(0x00018000)), 0x0002); /* tie to even 2 */
    ck_assert_uint_eq(tcc_f32_to_bf16(float_of_bits(0x007fffff)), 0x0080); /* to the normal */
    /* The largest bf16 is 0x7f7f; from the midpoint up, the result is infinity. */
    ck_assert_uint_eq(tcc_f32_to_bf16(float_of_bits(0x7f7f7fff)), 0x7f7f);
    ck_assert_uint_eq(tcc_f32_to_bf16(float_of_bits(0x7f7f8000)), 0x7f80);
    ck_assert_uint_eq(tcc_f32_to_bf16(FLT_MAX), 0x7f80);
    ck_assert_uint_eq(tcc_f32_to_bf16(-FLT_MAX), 0xff80);
    ck_assert_uint_eq(tcc_f32_to_bf16(INFINITY), 0x7f80);
    ck_assert_uint_eq(tcc_f32_to_bf16(-INFINITY), 0xff80);
}
END_TEST

START_TEST(test_every_bf16_midpoint)
{
    check_every_midpoint(&bf16_format);
}
END_TEST

START_TEST(test_bf16_nan)
{
    ck_assert(bf16_is_nan(tcc_f32_to_bf16(NAN)));
    ck_assert(bf16_is_nan(tcc_f32_to_bf16(-NAN)));
    ck_assert_uint_eq(tcc_f32_to_bf16(-NAN) & 0x8000, 0x8000);
    /* A payload only in the dropped bits must not turn the NaN into infinity (0x7f80). */
    ck_assert(bf16_is_nan(tcc_f32_to_bf16(float_of_bits(0x7f800001))));
    ck_assert(bf16_is_nan(tcc_f32_to_bf16(float_of_bits(0xffffffff))));
    ck_assert(bf16_is_nan(tcc_f32_to_bf16(float_of_bits(0x7f80ffff))));
    ck_assert(isnan(tcc_bf16_to_f32(0x7fc0)));
    ck_assert(isnan(tcc_bf16_to_f32(0x7f81)));
}
END_TEST

/* Where the compiler converts to __bf16 (GCC 13+, Clang 17+), it must agree. */
START_TEST(test_bf16_agrees_with_compiler)
{
#ifdef __BFLT16_MAX__
    check_agrees(&bf16_format, compiler_bf16, 43);
#endif
}
END_TEST

/* ---- tf32 ------------------------------------------------------------------------------ */

/* cvt.rna.tf32.f32 from its definition, in double: keep 11 significant bits (10 below the
 * leading one; subnormals keep the unit of the smallest normal's), round half away from 0. */
static float tf32_expected(float value)
{
    if (!isfinite(value))
        return value;
    int exponent = value == 0 ? -126 : ilogbf(value);
    double ulp = ldexp(1, (exponent < -126 ? -126 : exponent) - 10);
    double rounded = floor(fabs((double)value) / ulp + 0.5) * ulp; /* all exact in double */
    if (rounded >= ldexp(1, 128))
        return copysignf(INFINITY, value);
    return copysignf((float)rounded, value);
}

START_TEST(test_tf32_known_values)
{
    float ulp = ldexpf(1, -10); /* of a tf32 in [1, 2) */
    ck_assert(tcc_f32_to_tf32(1.0f) == 1.0f);
    ck_assert(tcc_f32_to_tf32(1.0f + ulp) == 1.0f + ulp);
    /* Ties go away from zero, where round-to-even would give 1 and -1. */
    ck_assert(tcc_f32_to_tf32(1.0f + ulp / 2) == 1.0f + ulp);
    ck_assert(tcc_f32_to_tf32(-(1.0f + ulp / 2)) == -(1.0f + ulp));
    ck_assert(tcc_f32_to_tf32(nextafterf(1.0f + ulp / 2, 0)) == 1.0f);
    ck_assert(tcc_f32_to_tf32(1.0f + 3 * ulp / 2) == 1.0f + 2 * ulp);
    ck_assert(tcc_f32_to_tf32(nextafterf(2.0f, 0)) == 2.0f); /* carry: next binade */
    ck_assert_uint_eq(float_bits(tcc_f32_to_tf32(0.1f)), 0x3dccc000);
    ck_assert_uint_eq(float_bits(tcc_f32_to_tf32(-0.0f)), 0x80000000);
    /* Subnormals: the kept unit is 2^-136 (bit 13); ties away. */
    ck_assert_uint_eq(float_bits(tcc_f32_to_tf32(float_of_bits(0x00000fff))), 0x00000000);
    ck_assert_uint_eq(float_bits(tcc_f32_to_tf32(float_of_bits(0x00001000))), 0x00002000);
    ck_assert_uint_eq(float_bits(tcc_f32_to_tf32(float_of_bits(0x807ff000))), 0x80800000);
    /* The largest tf32 is 0x7f7fe000; from the midpoint up, infinity. */
    ck_assert_uint_eq(float_bits(tcc_f32_to_tf32(float_of_bits(0x7f7fefff))), 0x7f7fe000);
    ck_assert(isinf(tcc_f32_to_tf32(FLT_MAX)) && tcc_f32_to_tf32(FLT_MAX) > 0);
    ck_assert(isinf(tcc_f32_to_tf32(-FLT_MAX)) && tcc_f32_to_tf32(-FLT_MAX) < 0);
    ck_assert(tcc_f32_to_tf32(INFINITY) == INFINITY);
    ck_assert(tcc_f32_to_tf32(-INFINITY) == -INFINITY);
}
END_TEST

START_TEST(test_tf32_nan)
{
    ck_assert(isnan(tcc_f32_to_tf32(NAN)));
    ck_assert(signbit(tcc_f32_to_tf32(-NAN)));
    /* A payload only in the 13 dropped bits stays a NaN, with those bits zero. */
    float low_payload = tcc_f32_to_tf32(float_of_bits(0x7f800001));
    ck_assert(isnan(low_payload));
    ck_assert_uint_eq(float_bits(low_payload) & 0x1fff, 0);
}
END_TEST

/* Random floats of every magnitude, and the floats around each rounding boundary. */
START_TEST(test_tf32_matches_definition)
{
    uint64_t state = 44;
    for (int i = 0; i < 300000; i++) {
        uint32_t bits = (uint32_t)test_random(&state);
        if (i % 2)
            bits = (bits & ~0x1fffu) | (0x1000u + (uint32_t)(i % 3) - 1); /* near a tie */
        float value = float_of_bits(bits);
        if (isnan(value))
            continue;
        uint32_t got = float_bits(tcc_f32_to_tf32(value));
        uint32_t expected = float_bits(tf32_expected(value));
        ck_assert_msg(got == expected, "0x%08x: 0x%08x, expected 0x%08x", bits, got, expected);
        ck_assert_uint_eq(got & 0x1fff, 0);
    }
}
END_TEST

START_TEST(test_dtype_size)
{
    ck_assert_uint_eq(tcc_dtype_size(TCC_VOID), 0);
    ck_assert_uint_eq(tcc_dtype_size(TCC_BOOL), 1);
    ck_assert_uint_eq(tcc_dtype_size(TCC_INT8), 1);
    ck_assert_uint_eq(tcc_dtype_size(TCC_INT32), 4);
    ck_assert_uint_eq(tcc_dtype_size(TCC_FLOAT16), 2);
    ck_assert_uint_eq(tcc_dtype_size(TCC_BFLOAT16), 2);
    ck_assert_uint_eq(tcc_dtype_size(TCC_FLOAT32), 4);
    ck_assert_uint_eq(tcc_dtype_size((tcc_dtype)99), 0);
}
END_TEST

START_TEST(test_dtype_is_float)
{
    ck_assert(tcc_dtype_is_float(TCC_FLOAT16));
    ck_assert(tcc_dtype_is_float(TCC_BFLOAT16));
    ck_assert(tcc_dtype_is_float(TCC_FLOAT32));
    ck_assert(!tcc_dtype_is_float(TCC_INT8));
    ck_assert(!tcc_dtype_is_float(TCC_INT32));
    ck_assert(!tcc_dtype_is_float(TCC_BOOL));
    ck_assert(!tcc_dtype_is_float(TCC_VOID));
    ck_assert(!tcc_dtype_is_float((tcc_dtype)99));
}
END_TEST

static Suite *half_suite(void)
{
    Suite *suite = suite_create("half");
    TCase *tc = test_case(suite, "convert", NULL, NULL);
    tcase_add_test(tc, test_every_half_converts_to_its_value);
    tcase_add_test(tc, test_every_half_round_trips);
    tcase_add_test(tc, test_known_values);
    tcase_add_test(tc, test_subnormals);
    tcase_add_test(tc, test_rounding_to_nearest_even);
    tcase_add_test(tc, test_every_midpoint);
    tcase_add_test(tc, test_overflow_and_infinity);
    tcase_add_test(tc, test_nan);
    tcase_add_test(tc, test_agrees_with_compiler);

    TCase *bf16 = test_case(suite, "bfloat16", NULL, NULL);
    tcase_add_test(bf16, test_every_bf16_converts_to_its_value);
    tcase_add_test(bf16, test_every_bf16_round_trips);
    tcase_add_test(bf16, test_bf16_rounding_to_nearest_even);
    tcase_add_test(bf16, test_every_bf16_midpoint);
    tcase_add_test(bf16, test_bf16_nan);
    tcase_add_test(bf16, test_bf16_agrees_with_compiler);

    TCase *tf32 = test_case(suite, "tf32", NULL, NULL);
    tcase_set_timeout(tf32, 60); /* the random sweep is slow under the sanitizers */
    tcase_add_test(tf32, test_tf32_known_values);
    tcase_add_test(tf32, test_tf32_nan);
    tcase_add_test(tf32, test_tf32_matches_definition);

    TCase *sizes = test_case(suite, "sizes", NULL, NULL);
    tcase_add_test(sizes, test_dtype_size);
    tcase_add_test(sizes, test_dtype_is_float);
    return suite;
}

TEST_MAIN(half_suite)
