/*
 * The built-in tunable templates (tcc_template, tcc/tune.h), one file each, listed once in
 * templates.c: each defines its knobs through the config and, applying it, builds the kernel.
 */
#ifndef TCI_TUNE_TEMPLATES_H
#define TCI_TUNE_TEMPLATES_H

#include "tcc/tune.h"

/* The seed's AutoTVM template (../shared/seeds/003): a CUDA-core float32 NCHW convolution of
 * batch 1 (template_conv2d_no_batching.c). */
tcc_status tci_template_conv2d_no_batching(tcc_context *ctx, tcc_config *cfg,
                                           const tcc_workload *workload, tcc_arch arch,
                                           const tcc_build_options *options, tcc_kernel **kernel);
/* tcc's implicit GEMM: every field of tcc_gemm_schedule a knob, conv2d or matmul
 * (template_gemm.c). */
tcc_status tci_template_gemm(tcc_context *ctx, tcc_config *cfg, const tcc_workload *workload,
                             tcc_arch arch, const tcc_build_options *options, tcc_kernel **kernel);
/* Its knobs that a config could leave "chosen" and build the same kernel
 * (tcc_template.redundant_knobs). */
uint64_t tci_template_gemm_redundant_knobs(tcc_context *ctx, tcc_config *cfg,
                                           const tcc_workload *workload, tcc_arch arch);
/* The tensor-core tutorial's schedule (seeds 000-002): its five tile sizes (template_tutorial.c).
 */
tcc_status tci_template_tutorial(tcc_context *ctx, tcc_config *cfg, const tcc_workload *workload,
                                 tcc_arch arch, const tcc_build_options *options,
                                 tcc_kernel **kernel);

#endif
