/*
 * The named convolution layers of ../shared/layers.csv, compiled in so that --layer works
 * wherever the tool is copied: the convolutions of TVM's tensor-core tutorial and of
 * its AutoTVM tutorial (named seed_* there) and ResNet-50 layers at batch 1, 32 and 256.
 */
#include "conv_options.h"

#include <string.h>

/* clang-format off */
static const ConvLayer layers[] = {
    /* name                  N    H   W    C    K  R  S  stride pad dilation groups */
    {"seed_tutorial",      256, 14, 14, 256, 512, 3, 3, 1, 1, 1, 1},
    {"seed_autotvm",         1,  7,  7, 512, 512, 3, 3, 1, 1, 1, 1},
    {"r50_res2_3x3_b32",    32, 56, 56,  64,  64, 3, 3, 1, 1, 1, 1},
    {"r50_res2_1x1_b32",    32, 56, 56,  64, 256, 1, 1, 1, 0, 1, 1},
    {"r50_res3_3x3s2_b32",  32, 56, 56, 128, 128, 3, 3, 2, 1, 1, 1},
    {"r50_res4_3x3_b32",    32, 14, 14, 256, 256, 3, 3, 1, 1, 1, 1},
    {"r50_res5_3x3_b32",    32,  7,  7, 512, 512, 3, 3, 1, 1, 1, 1},
    {"r50_res3_1x1_b256",  256, 28, 28, 512, 128, 1, 1, 1, 0, 1, 1},
    {"r50_res4_3x3_b1",      1, 14, 14, 256, 256, 3, 3, 1, 1, 1, 1},
};
/* clang-format on */

#define NLAYER (sizeof layers / sizeof layers[0])

const ConvLayer *conv_find_layer(const char *name)
{
    for (size_t i = 0; i < NLAYER; i++)
        if (strcmp(layers[i].name, name) == 0)
            return &layers[i];
    return NULL;
}

void conv_list_layers(FILE *out)
{
    for (size_t i = 0; i < NLAYER; i++) {
        const ConvLayer *l = &layers[i];
        fprintf(out,
                "%-20s N=%lld H=%lld W=%lld C=%lld K=%lld %lldx%lld stride %lld pad %lld "
                "dilation %lld groups %lld\n",
                l->name, (long long)l->batch, (long long)l->height, (long long)l->width,
                (long long)l->in_channels, (long long)l->out_channels, (long long)l->kernel_h,
                (long long)l->kernel_w, (long long)l->stride, (long long)l->pad,
                (long long)l->dilation, (long long)l->groups);
    }
}
