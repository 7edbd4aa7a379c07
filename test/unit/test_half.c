/*
 * tcc_f32_to_f16 / tcc_f16_to_f32: exhaustive over the half bit patterns, and over every
 * rounding boundary between two adjacent halves.
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

static bool half_is_nan(uint16_t bits)
{
    return (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) != 0;
}

/* The value of a half, computed independently of half.c from the IEEE definition. */
static double half_value(uint16_t bits)
{
    int exponent = (bits >> 10) & 0x1f;
    int mantissa = bits & 0x3ff;
    double sign = (bits & 0x8000) ? -1.0 : 1.0;
    if (exponent == 0x1f)
        return mantissa ? NAN : sign * INFINITY;
    if (exponent == 0)
        return sign * ldexp(mantissa, -24);
    return sign * ldexp(1024 + mantissa, exponent - 25);
}

START_TEST(test_every_half_converts_to_its_value)
{
    for (uint32_t bits = 0; bits < 65536; bits++) {
        float value = tcc_f16_to_f32((uint16_t)bits);
        double expected = half_value((uint16_t)bits);
        if (half_is_nan((uint16_t)bits)) {
            ck_assert_msg(isnan(value), "0x%04x should be NaN", bits);
            ck_assert_int_eq(signbit(value) != 0, (bits & 0x8000) != 0);
        } else {
            ck_assert_msg((double)value == expected, "0x%04x -> %a, expected %a", bits,
                          (double)value, expected);
            ck_assert_int_eq(signbit(value) != 0, (bits & 0x8000) != 0); /* -0 stays -0 */
        }
    }
}
END_TEST

START_TEST(test_every_half_round_trips)
{
    for (uint32_t bits = 0; bits < 65536; bits++) {
        uint16_t back = tcc_f32_to_f16(tcc_f16_to_f32((uint16_t)bits));
        if (half_is_nan((uint16_t)bits)) {
            /* A NaN stays a NaN of the same sign; the payload is not promised. */
            ck_assert_msg(half_is_nan(back), "0x%04x -> 0x%04x is not NaN", bits, back);
            ck_assert_int_eq(back & 0x8000, bits & 0x8000);
        } else {
            ck_assert_msg(back == bits, "0x%04x -> 0x%04x", bits, back);
        }
    }
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

/* Every boundary: the midpoint of two adjacent finite halves goes to the even one, and the
 * floats just below and above it go to the nearer one. */
START_TEST(test_every_midpoint)
{
    for (uint16_t bits = 0; bits < 0x7bff; bits++) {
        float low = tcc_f16_to_f32(bits), high = tcc_f16_to_f32((uint16_t)(bits + 1));
        float middle = (low + high) / 2; /* exact: halves have 11 significant bits */
        uint16_t even = (bits & 1) ? (uint16_t)(bits + 1) : bits;
        ck_assert_msg(tcc_f32_to_f16(middle) == even, "midpoint after 0x%04x", bits);
        ck_assert_uint_eq(tcc_f32_to_f16(nextafterf(middle, 0)), bits);
        ck_assert_uint_eq(tcc_f32_to_f16(nextafterf(middle, INFINITY)), bits + 1);
        ck_assert_uint_eq(tcc_f32_to_f16(-middle), even | 0x8000);
    }
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

/* Where the compiler has _Float16, its conversion (round to nearest even) must agree on
 * random floats of every magnitude. */
START_TEST(test_agrees_with_compiler)
{
#ifdef __FLT16_MAX__
    uint64_t state = 42;
    for (int i = 0; i < 1000000; i++) {
        uint32_t bits = (uint32_t)tcc_test_random(&state);
        float value;
        memcpy(&value, &bits, sizeof value);
        if (isnan(value))
            continue;
        volatile _Float16 half = (_Float16)value;
        uint16_t expected;
        memcpy(&expected, (const void *)&half, sizeof expected);
        ck_assert_msg(tcc_f32_to_f16(value) == expected, "%a: 0x%04x, expected 0x%04x",
                      (double)value, tcc_f32_to_f16(value), expected);
    }
#endif
}
END_TEST

static Suite *half_suite(void)
{
    Suite *suite = suite_create("half");
    TCase *tc = tcase_create("convert");
    tcase_add_test(tc, test_every_half_converts_to_its_value);
    tcase_add_test(tc, test_every_half_round_trips);
    tcase_add_test(tc, test_known_values);
    tcase_add_test(tc, test_subnormals);
    tcase_add_test(tc, test_rounding_to_nearest_even);
    tcase_add_test(tc, test_every_midpoint);
    tcase_add_test(tc, test_overflow_and_infinity);
    tcase_add_test(tc, test_nan);
    tcase_add_test(tc, test_agrees_with_compiler);
    suite_add_tcase(suite, tc);
    return suite;
}

int main(void)
{
    return tcc_test_run(half_suite());
}
