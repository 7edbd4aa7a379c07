/*
 * Codegen from hand-built kernels: the LLVM IR and PTX of a scalar/vector kernel and of
 * a WMMA kernel, the refusals (device limits, archs lacking an intrinsic), and, when a
 * CUDA toolkit is installed, ptxas accepting the PTX for every arch.
 */
#include "codegen_support.h"

/* ---- building kernels by hand ------------------------------------------------------------ */

/* A raw binary node, bypassing the constructor's constant folding, so LLVM folds it. */
static Expr *raw_binary(ExprKind kind, int64_t a, int64_t b)
{
    Expr *e = tci_arena_alloc(arena, sizeof *e);
    e->kind = kind;
    e->type = TCC_INT32;
    e->lanes = 1;
    e->bin.a = num(a);
    e->bin.b = num(b);
    return e;
}

/* A vector-add style kernel: block and thread loops (the thread loop shorter than the
 * block, so guarded), a guarded store, floor div/mod, an if_then_else guarding a load,
 * a serial loop over a local buffer, half casts and 4-wide vector accesses. */
static PrimFunc *vector_add_kernel(void)
{
    Buffer *A = f32_buffer("A", TCC_SCOPE_GLOBAL, 1024);
    Buffer *B = f32_buffer("B", TCC_SCOPE_GLOBAL, 1024);
    Buffer *C = f32_buffer("C", TCC_SCOPE_GLOBAL, 1024);
    Buffer *H = buffer1("H", TCC_FLOAT16, TCC_SCOPE_GLOBAL, 1024);
    Buffer *Q = buffer1("Q", TCC_INT32, TCC_SCOPE_GLOBAL, 8);
    Buffer *params[] = {A, B, C, H, Q};
    PrimFunc *k = ir_kernel("vector_add", 5, params);
    Var *bx = ir_launch(k, TCC_BLOCK_X, 8, tci_prim_func_new_var(k, "blockIdx.x"));
    Var *tx = ir_launch(k, TCC_THREAD_X, 128, tci_prim_func_new_var(k, "threadIdx.x"));
    Var *r = tci_prim_func_new_var(k, "r");

    Expr *i = add(mul(tci_ir_var(arena, bx), 128), tci_ir_var(arena, tx));
    Expr *prev = tci_ir_select(arena, bin(EXPR_LE, num(1), i), load1(B, sub(i, num(1))),
                               tci_ir_float(arena, 0.0, TCC_FLOAT32));
    Expr *divmod = sub(div_(i, 4), mod(i, 4));
    Expr *sum = add(add(load1(A, i), prev), tci_ir_cast(arena, TCC_FLOAT32, divmod));
    Stmt *c_store = store1(C, i, sum);
    Stmt *h_store = store1(
        H, i,
        add(tci_ir_cast(arena, TCC_FLOAT16, load1(A, i)), tci_ir_float(arena, 0.5, TCC_FLOAT16)));

    /* acc[0] = sum over r < 4 of A[(i + r) % 1024]; C[i] = C[i] + acc[0] */
    Buffer *acc = f32_buffer("acc", TCC_SCOPE_LOCAL, 1);
    Stmt *acc_init = store1(acc, num(0), tci_ir_float(arena, 0.0, TCC_FLOAT32));
    Expr *ir = mod(add(i, tci_ir_var(arena, r)), 1024);
    Stmt *acc_add = store1(acc, num(0), add(load1(acc, num(0)), load1(A, ir)));
    Stmt *acc_out = store1(C, i, add(load1(C, i), load1(acc, num(0))));
    Stmt *local_items[] = {acc_init, loop(r, 4, FOR_SERIAL, acc_add), acc_out};
    Stmt *local = tci_stmt_allocate(arena, acc, tci_stmt_seq(arena, 3, local_items));

    Stmt *guarded_items[] = {c_store, h_store, local};
    Stmt *guarded =
        tci_stmt_if(arena, bin(EXPR_LT, i, num(1000)), tci_stmt_seq(arena, 3, guarded_items), NULL);

    /* C[4 tx .. 4 tx + 3] = A[4 tx .. 4 tx + 3] * 2 for tx < 100, as one vector access */
    Expr *ramp = tci_ir_ramp(arena, mul(tci_ir_var(arena, tx), 4), 1, 4);
    Stmt *vec =
        store1(C, ramp, bin(EXPR_MUL, load1(A, ramp), tci_ir_float(arena, 2.0, TCC_FLOAT32)));
    Stmt *vec_loop = tci_stmt_thread(arena, tx, TCC_THREAD_X, 100, vec);

    /* Floor division and modulo of constants with every sign, folded by LLVM. */
    Stmt *folds[] = {
        store1(Q, num(0), raw_binary(EXPR_DIV, -7, 2)),   /* -4 */
        store1(Q, num(1), raw_binary(EXPR_MOD, -9, 4)),   /* 3 */
        store1(Q, num(2), raw_binary(EXPR_DIV, 13, -3)),  /* -5 */
        store1(Q, num(3), raw_binary(EXPR_MOD, 13, -3)),  /* -2 */
        store1(Q, num(4), raw_binary(EXPR_DIV, -13, -3)), /* 4 */
        store1(Q, num(5), raw_binary(EXPR_MOD, -13, -3)), /* -1 */
    };
    Stmt *fold_if =
        tci_stmt_if(arena, bin(EXPR_EQ, i, num(0)), tci_stmt_seq(arena, 6, folds), NULL);

    Stmt *body_items[] = {tci_stmt_thread(arena, tx, TCC_THREAD_X, 128, guarded), vec_loop,
                          fold_if};
    Stmt *body = tci_stmt_seq(arena, 3, body_items);
    k->body = tci_stmt_thread(arena, bx, TCC_BLOCK_X, 8,
                              tci_stmt_thread(arena, tx, TCC_THREAD_X, 128, body));
    return k;
}

/* A load or store of the m x n x k tile fragment[index] at memory[offset]. */
static Stmt *wmma_at(WmmaOp op, int m, int n, int k, Buffer *fragment, int64_t index,
                     Buffer *memory, int64_t offset, int64_t stride, bool col_major)
{
    WmmaStmt w = wmma_op(op, m, n, k, fragment, num(index));
    w.col_major = col_major;
    Expr *at = num(offset);
    return wmma_memory(w, memory, 1, &at, stride);
}

/* acc[0] = 0 on an m x n x k tile. */
static Stmt *wmma_zero(int m, int n, int k, Buffer *acc)
{
    WmmaStmt w = wmma_op(WMMA_FILL, m, n, k, acc, num(0));
    w.fill_value = 0.0;
    return tci_stmt_wmma(arena, &w);
}

/* acc[0] += a[ia] x b[ib] on an m x n x k tile. */
static Stmt *wmma_accumulate(int m, int n, int k, Buffer *acc, Buffer *a, int64_t ia, Buffer *b,
                             int64_t ib)
{
    return wmma_mma(m, n, k, acc, num(0), a, num(ia), b, num(ib));
}

/* A kernel `name`(A, B, C) of one warp: the caller adds the body. */
static PrimFunc *warp_kernel(const char *name, Buffer *A, Buffer *B, Buffer *C, Var **tx)
{
    Buffer *params[] = {A, B, C};
    PrimFunc *k = ir_kernel(name, 3, params);
    *tx = ir_launch(k, TCC_THREAD_X, 32, tci_prim_func_new_var(k, "threadIdx.x"));
    return k;
}

/* One warp computes C (16x16, f32) = A (16x32, f16) * B (32x16, f16): A and B are copied
 * into shared memory with 8-wide vector accesses, then two k-steps of load_a, load_b, mma,
 * and the accumulator is stored to global memory. */
static PrimFunc *wmma_kernel(int64_t a_shared_elements)
{
    Buffer *A = buffer1("A", TCC_FLOAT16, TCC_SCOPE_GLOBAL, 16 * 32);
    Buffer *B = buffer1("B", TCC_FLOAT16, TCC_SCOPE_GLOBAL, 32 * 16);
    Buffer *C = f32_buffer("C", TCC_SCOPE_GLOBAL, 16 * 16);
    Var *tx;
    PrimFunc *k = warp_kernel("wmma_gemm", A, B, C, &tx);
    Var *j = tci_prim_func_new_var(k, "j");

    Buffer *As = buffer1("A.shared", TCC_FLOAT16, TCC_SCOPE_SHARED, a_shared_elements);
    Buffer *Bs = buffer1("B.shared", TCC_FLOAT16, TCC_SCOPE_SHARED, 32 * 16);
    Buffer *fa = buffer1("A.shared.wmma.matrix_a", TCC_FLOAT16, TCC_SCOPE_WMMA_MATRIX_A, 512);
    Buffer *fb = buffer1("B.shared.wmma.matrix_b", TCC_FLOAT16, TCC_SCOPE_WMMA_MATRIX_B, 512);
    Buffer *acc = f32_buffer("C.wmma.accumulator", TCC_SCOPE_WMMA_ACCUMULATOR, 256);

    /* 512 elements per matrix, 16 per thread: two vectors of 8 */
    Expr *offset = add(mul(tci_ir_var(arena, tx), 16), mul(tci_ir_var(arena, j), 8));
    Expr *ramp = tci_ir_ramp(arena, offset, 1, 8);
    Stmt *copies[] = {store1(As, ramp, load1(A, ramp)), store1(Bs, ramp, load1(B, ramp))};
    Stmt *copy = loop(j, 2, FOR_SERIAL, tci_stmt_seq(arena, 2, copies));

    Stmt *steps[] = {
        wmma_zero(16, 16, 16, acc),
        wmma_at(WMMA_LOAD_A, 16, 16, 16, fa, 0, As, 0, 32, false),
        wmma_at(WMMA_LOAD_B, 16, 16, 16, fb, 0, Bs, 0, 16, false),
        wmma_accumulate(16, 16, 16, acc, fa, 0, fb, 0),
        wmma_at(WMMA_LOAD_A, 16, 16, 16, fa, 1, As, 16, 32, false),
        wmma_at(WMMA_LOAD_B, 16, 16, 16, fb, 1, Bs, 256, 16, false),
        wmma_accumulate(16, 16, 16, acc, fa, 1, fb, 1),
        wmma_at(WMMA_STORE, 16, 16, 16, acc, 0, C, 0, 16, false),
    };
    Stmt *compute = tci_stmt_seq(arena, 8, steps);
    compute = tci_stmt_allocate(arena, fb, compute);
    compute = tci_stmt_allocate(arena, fa, compute);
    compute = tci_stmt_allocate(arena, acc, compute);
    Stmt *items[] = {copy, tci_stmt_barrier(arena), compute};
    Stmt *body = tci_stmt_seq(arena, 3, items);
    body = tci_stmt_allocate(arena, Bs, body);
    body = tci_stmt_allocate(arena, As, body);
    k->body = tci_stmt_thread(arena, tx, TCC_THREAD_X, 32, body);
    return k;
}

/* fill, load_a, load_b, mma, store straight from and to global memory, for one row of the
 * shape/type table. */
static PrimFunc *wmma_table_kernel(int m, int n, int k, tcc_dtype in, tcc_dtype out,
                                   bool a_col_major)
{
    Buffer *A = buffer1("A", in, TCC_SCOPE_GLOBAL, m * k);
    Buffer *B = buffer1("B", in, TCC_SCOPE_GLOBAL, k * n);
    Buffer *C = buffer1("C", out, TCC_SCOPE_GLOBAL, m * n);
    Var *tx;
    PrimFunc *kern = warp_kernel("wmma_table", A, B, C, &tx);
    Buffer *fa = buffer1("a", in, TCC_SCOPE_WMMA_MATRIX_A, m * k);
    Buffer *fb = buffer1("b", in, TCC_SCOPE_WMMA_MATRIX_B, k * n);
    Buffer *acc = buffer1("c", out, TCC_SCOPE_WMMA_ACCUMULATOR, m * n);
    Stmt *steps[] = {
        wmma_zero(m, n, k, acc),
        wmma_at(WMMA_LOAD_A, m, n, k, fa, 0, A, 0, a_col_major ? m : k, a_col_major),
        wmma_at(WMMA_LOAD_B, m, n, k, fb, 0, B, 0, n, false),
        wmma_accumulate(m, n, k, acc, fa, 0, fb, 0),
        wmma_at(WMMA_STORE, m, n, k, acc, 0, C, 0, n, false),
    };
    Stmt *body = tci_stmt_seq(arena, 5, steps);
    body = tci_stmt_allocate(arena, acc,
                             tci_stmt_allocate(arena, fb, tci_stmt_allocate(arena, fa, body)));
    kern->body = tci_stmt_thread(arena, tx, TCC_THREAD_X, 32, body);
    return kern;
}

/* Y[tx] = value(X, tx) for each of `threads` threads tx: the kernel `name`(X, Y), X of
 * float32 and Y of `out_type`. */
static PrimFunc *map_kernel(const char *name, tcc_dtype out_type, int64_t threads,
                            Expr *(*value)(Buffer *x, Expr *tx))
{
    Buffer *X = f32_buffer("X", TCC_SCOPE_GLOBAL, threads);
    Buffer *Y = buffer1("Y", out_type, TCC_SCOPE_GLOBAL, threads);
    Buffer *params[] = {X, Y};
    PrimFunc *k = ir_kernel(name, 2, params);
    Var *tx = ir_launch(k, TCC_THREAD_X, threads, tci_prim_func_new_var(k, "tx"));
    Expr *t = tci_ir_var(arena, tx);
    k->body = tci_stmt_thread(arena, tx, TCC_THREAD_X, threads, store1(Y, t, value(X, t)));
    return k;
}

/* ---- tests -------------------------------------------------------------------------------- */

START_TEST(test_vector_add)
{
    Output out = generated(vector_add_kernel(), TCC_SM_80);
    ck_assert_int_eq(out.shared_bytes, 0);
    assert_contains(out.llvm_ir, "define ptx_kernel void @vector_add(ptr addrspace(1) noalias");
    assert_contains(out.llvm_ir, "llvm.nvvm.read.ptx.sreg.tid.x");
    assert_contains(out.llvm_ir, "llvm.nvvm.read.ptx.sreg.ctaid.x");
    assert_contains(out.llvm_ir, "!\"maxntidx\", i32 128, !\"maxntidy\", i32 1");
    assert_contains(out.llvm_ir, "\"nvvm.maxntid\"=\"128,1,1\"");
    assert_contains(out.llvm_ir, "load <4 x float>");
    assert_contains(out.llvm_ir, "store <4 x float>");
    assert_contains(out.llvm_ir, "fptrunc float");
    /* floor division and modulo with every sign combination */
    int folded[] = {-4, 3, -5, -2, 4, -1};
    for (int i = 0; i < 6; i++)
        ck_assert_msg(contains_i32(out.llvm_ir, folded[i]), "no folded i32 %d in\n%s", folded[i],
                      out.llvm_ir);
    assert_contains(out.ptx, ".entry vector_add");
    assert_contains(out.ptx, ".maxntid 128, 1, 1");
    assert_contains(out.ptx, ".target sm_80");
    assert_contains(out.ptx, "ld.global.nc.v4.f32");
    assert_contains(out.ptx, "st.global.v4.f32");
    assert_contains(out.ptx, "st.global.b16");
    output_free(&out);
}
END_TEST

/* X[tx - 1] where 1 <= tx, else 0: a load behind a guard. */
static Expr *guarded_previous(Buffer *x, Expr *tx)
{
    return tci_ir_select(arena, bin(EXPR_LE, num(1), tx), load1(x, sub(tx, num(1))),
                         tci_ir_float(arena, 0.0, TCC_FLOAT32));
}

/* The guarded load X[tx - 1] must stay behind its branch: O3 may not hoist it. */
START_TEST(test_guarded_load_is_branched)
{
    Output out = generated(map_kernel("guarded", TCC_FLOAT32, 64, guarded_previous), TCC_SM_80);
    /* the load lives in a block of its own, reached by a conditional branch */
    assert_contains(out.llvm_ir, "br i1");
    assert_contains(out.llvm_ir, "phi float");
    check_ptxas(out.ptx, TCC_SM_80);
    output_free(&out);
}
END_TEST

START_TEST(test_wmma_kernel)
{
    Output out = generated(wmma_kernel(16 * 32), TCC_SM_80);
    ck_assert_int_eq(out.shared_bytes, 2048);
    assert_contains(out.llvm_ir, "@llvm.nvvm.wmma.m16n16k16.load.a.row.stride.f16.p3(");
    assert_contains(out.llvm_ir, "@llvm.nvvm.wmma.m16n16k16.load.b.row.stride.f16.p3(");
    assert_contains(out.llvm_ir, "@llvm.nvvm.wmma.m16n16k16.mma.row.row.f32.f32(");
    assert_contains(out.llvm_ir, "@llvm.nvvm.wmma.m16n16k16.store.d.row.stride.f32.p1(");
    assert_contains(out.llvm_ir, "@llvm.nvvm.barrier0()");
    assert_contains(out.llvm_ir, "addrspace(3) global [512 x half] undef, align 128");
    /* fragments end up in registers: no alloca survives O3 */
    ck_assert_msg(!strstr(out.llvm_ir, "alloca"), "an alloca survived:\n%s", out.llvm_ir);
    assert_contains(out.ptx, ".entry wmma_gemm");
    assert_contains(out.ptx, "wmma.load.a.sync.aligned.row.m16n16k16.shared.f16");
    assert_contains(out.ptx, "wmma.load.b.sync.aligned.row.m16n16k16.shared.f16");
    assert_contains(out.ptx, "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32");
    assert_contains(out.ptx, "wmma.store.d.sync.aligned.row.m16n16k16.global.f32");
    assert_contains(out.ptx, "bar.sync");
    assert_contains(out.ptx, ".maxntid 32, 1, 1");
    assert_contains(out.ptx, ".shared .align 128 .b8 A_shared[1024];");
    assert_contains(out.ptx, ".shared .align 128 .b8 B_shared[1024];");
    output_free(&out);
}
END_TEST

START_TEST(test_ptxas_all_archs)
{
    for (int i = 0; i < tcc_arch_count(); i++) {
        tcc_arch arch = tcc_arch_at(i);
        PrimFunc *kernels[] = {vector_add_kernel(), wmma_kernel(16 * 32)};
        for (int j = 0; j < 2; j++) {
            Output out = generate(ctx, kernels[j], arch);
            ck_assert_msg(out.status == TCC_OK, "%s: %s", tcc_arch_name(arch), tcc_last_error(ctx));
            char target[32];
            snprintf(target, sizeof target, ".target %s", tcc_arch_name(arch));
            assert_contains(out.ptx, target);
            check_ptxas(out.ptx, arch);
            output_free(&out);
        }
    }
}
END_TEST

/* Every shape and type combination of the WMMA table builds, selects, and assembles. */
START_TEST(test_wmma_table)
{
    static const struct {
        int m, n, k;
        tcc_dtype in, out;
        tcc_arch arch;
        const char *mma;
    } rows[] = {
        {16, 16, 16, TCC_FLOAT16, TCC_FLOAT32, TCC_SM_70, "m16n16k16.mma.row.row.f32.f32"},
        {16, 16, 16, TCC_FLOAT16, TCC_FLOAT16, TCC_SM_70, "m16n16k16.mma.row.row.f16.f16"},
        {32, 8, 16, TCC_FLOAT16, TCC_FLOAT32, TCC_SM_70, "m32n8k16.mma.row.row.f32.f32"},
        {8, 32, 16, TCC_FLOAT16, TCC_FLOAT16, TCC_SM_70, "m8n32k16.mma.row.row.f16.f16"},
        {16, 16, 16, TCC_BFLOAT16, TCC_FLOAT32, TCC_SM_80, "m16n16k16.mma.row.row.bf16"},
        {32, 8, 16, TCC_BFLOAT16, TCC_FLOAT32, TCC_SM_80, "m32n8k16.mma.row.row.bf16"},
        {8, 32, 16, TCC_BFLOAT16, TCC_FLOAT32, TCC_SM_80, "m8n32k16.mma.row.row.bf16"},
        {16, 16, 8, TCC_FLOAT32, TCC_FLOAT32, TCC_SM_80, "m16n16k8.mma.row.row.tf32"},
        {16, 16, 16, TCC_INT8, TCC_INT32, TCC_SM_75, "m16n16k16.mma.row.row.s8"},
        {32, 8, 16, TCC_INT8, TCC_INT32, TCC_SM_75, "m32n8k16.mma.row.row.s8"},
        {8, 32, 16, TCC_INT8, TCC_INT32, TCC_SM_75, "m8n32k16.mma.row.row.s8"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        PrimFunc *k =
            wmma_table_kernel(rows[i].m, rows[i].n, rows[i].k, rows[i].in, rows[i].out, false);
        Output out = generate(ctx, k, rows[i].arch);
        ck_assert_msg(out.status == TCC_OK, "%s: %s", rows[i].mma, tcc_last_error(ctx));
        assert_contains(out.llvm_ir, rows[i].mma);
        check_ptxas(out.ptx, rows[i].arch);
        output_free(&out);
    }
}
END_TEST

START_TEST(test_wmma_col_major)
{
    Output out =
        generated(wmma_table_kernel(16, 16, 16, TCC_FLOAT16, TCC_FLOAT32, true), TCC_SM_80);
    assert_contains(out.llvm_ir, "llvm.nvvm.wmma.m16n16k16.load.a.col.stride.f16.p1");
    assert_contains(out.llvm_ir, "llvm.nvvm.wmma.m16n16k16.mma.col.row.f32.f32");
    assert_contains(out.ptx, "wmma.load.a.sync.aligned.col.m16n16k16.global.f16");
    assert_contains(out.ptx, "wmma.mma.sync.aligned.col.row.m16n16k16.f32.f32");
    check_ptxas(out.ptx, TCC_SM_80);
    output_free(&out);
}
END_TEST

START_TEST(test_refuses_too_much_shared_memory)
{
    /* 32768 f16 for A plus 1024 bytes for B */
    PrimFunc *k = wmma_kernel(32768);
    Output out = generate(ctx, k, TCC_SM_80);
    ck_assert_int_eq(out.status, TCC_ERROR_SCHEDULE);
    ck_assert_ptr_null(out.llvm_ir);
    ck_assert_ptr_null(out.ptx);
    ck_assert_str_eq(tcc_last_error(ctx), "schedule needs 66560 bytes of shared memory; the "
                                          "limit for static shared memory is 49152");
}
END_TEST

START_TEST(test_refuses_too_many_threads)
{
    PrimFunc *k = vector_add_kernel();
    k->launch[TCC_THREAD_Y] = 16; /* 128 x 16 = 2048 */
    Output out = generate(ctx, k, TCC_SM_80);
    ck_assert_int_eq(out.status, TCC_ERROR_SCHEDULE);
    assert_contains(tcc_last_error(ctx), "2048 threads per block");
    assert_contains(tcc_last_error(ctx), "the limit is 1024");
    assert_one_line(ctx);
}
END_TEST

/* Every intrinsic the generator can emit resolves in this LLVM; a misspelled one is an error
 * (LLVM itself would silently emit a call to an undefined .extern .func). */
START_TEST(test_intrinsic_names_resolve)
{
    ck_assert_msg(tci_codegen_check_intrinsics(ctx) == TCC_OK, "%s", tcc_last_error(ctx));
    unsigned id = 0;
    ck_assert_int_eq(
        tci_llvm_intrinsic_id(ctx, "llvm.nvvm.wmma.m16n16k16.load.a.row.stride.f16", &id), TCC_OK);
    ck_assert_uint_ne(id, 0);
    ck_assert_int_eq(
        tci_llvm_intrinsic_id(ctx, "llvm.nvvm.wmma.m16n16k16.lod.a.row.stride.f16", &id),
        TCC_ERROR_LLVM);
    ck_assert_str_eq(tcc_last_error(ctx),
                     "LLVM has no intrinsic llvm.nvvm.wmma.m16n16k16.lod.a.row.stride.f16");
}
END_TEST

/* Schedule knobs too large to multiply are refused before the default schedule multiplies
 * them (268435456 x 16 overflows an int). */
START_TEST(test_refuses_huge_schedule_knobs)
{
    tcc_matmul_desc desc;
    tcc_matmul_desc_init(&desc);
    desc.m = desc.n = desc.k = 64;
    tcc_gemm_schedule schedule = {.size = sizeof(tcc_gemm_schedule), .warp_row_tiles = 268435456};
    tcc_kernel *kernel = NULL;
    ck_assert_int_eq(tcc_matmul_compile(ctx, &desc, &schedule, NULL, &kernel),
                     TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(kernel);
    ck_assert_str_eq(tcc_last_error(ctx),
                     "schedule: warps, tiles and passes must be between 1 and 64");
}
END_TEST

/* A NULL descriptor or result pointer is an error with a message. */
START_TEST(test_null_descriptors_say_so)
{
    tcc_matmul_desc desc;
    tcc_matmul_desc_init(&desc);
    tcc_kernel *kernel = NULL;
    tcc_gemm_schedule schedule;
    ck_assert_int_eq(tcc_conv2d_compile(ctx, NULL, NULL, NULL, &kernel),
                     TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_str_eq(tcc_last_error(ctx), "tcc_conv2d_compile: the descriptor is NULL");
    ck_assert_int_eq(tcc_matmul_compile(ctx, &desc, NULL, NULL, NULL), TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_str_eq(tcc_last_error(ctx), "tcc_matmul_compile: the result pointer is NULL");
    ck_assert_int_eq(tcc_conv2d_default_schedule(ctx, NULL, TCC_SM_80, &schedule),
                     TCC_ERROR_INVALID_ARGUMENT);
    ck_assert_str_eq(tcc_last_error(ctx), "tcc_conv2d_default_schedule: the descriptor is NULL");
    ck_assert_ptr_null(kernel);
}
END_TEST

/* A 3x3 convolution padded by 1 of `batch` NHWC images of size x size, 128 -> 256 channels. */
START_TEST(test_refuses_unsupported_arch)
{
    /* f16 WMMA before Volta */
    Output out = generate(ctx, wmma_kernel(16 * 32), (tcc_arch)61);
    ck_assert_int_eq(out.status, TCC_ERROR_UNSUPPORTED);
    ck_assert_str_eq(tcc_last_error(ctx),
                     "tensor cores (WMMA) need sm_70 or newer; the target is sm_61");
    ck_assert_ptr_null(out.ptx);
    /* bf16 WMMA on Turing, int8 WMMA on Volta, tf32 on Turing */
    out = generate(ctx, wmma_table_kernel(16, 16, 16, TCC_BFLOAT16, TCC_FLOAT32, false), TCC_SM_75);
    ck_assert_int_eq(out.status, TCC_ERROR_UNSUPPORTED);
    ck_assert_str_eq(tcc_last_error(ctx),
                     "WMMA m16n16k16 with bfloat16 inputs needs sm_80 or newer; the target is "
                     "sm_75");
    out = generate(ctx, wmma_table_kernel(16, 16, 16, TCC_INT8, TCC_INT32, false), TCC_SM_70);
    ck_assert_int_eq(out.status, TCC_ERROR_UNSUPPORTED);
    assert_contains(tcc_last_error(ctx), "needs sm_75");
    out = generate(ctx, wmma_table_kernel(16, 16, 8, TCC_FLOAT32, TCC_FLOAT32, false), TCC_SM_75);
    ck_assert_int_eq(out.status, TCC_ERROR_UNSUPPORTED);
    /* shapes and type pairs the table lacks */
    out = generate(ctx, wmma_table_kernel(16, 16, 8, TCC_FLOAT16, TCC_FLOAT32, false), TCC_SM_80);
    ck_assert_int_eq(out.status, TCC_ERROR_UNSUPPORTED);
    ck_assert_str_eq(tcc_last_error(ctx), "WMMA m16n16k8 with float16 inputs is not supported");
    out = generate(ctx, wmma_table_kernel(16, 16, 16, TCC_BFLOAT16, TCC_FLOAT16, false), TCC_SM_80);
    ck_assert_int_eq(out.status, TCC_ERROR_UNSUPPORTED);
    assert_one_line(ctx);
}
END_TEST

/* X[tx] converted to bfloat16. */
static Expr *to_bf16(Buffer *x, Expr *tx)
{
    return tci_ir_cast(arena, TCC_BFLOAT16, load1(x, tx));
}

/* bfloat16 arithmetic selects sm_80 instructions: refused below, accepted from sm_80. */
START_TEST(test_bfloat16_needs_sm80)
{
    PrimFunc *k = map_kernel("to_bf16", TCC_BFLOAT16, 32, to_bf16);
    Output out = generate(ctx, k, TCC_SM_75);
    ck_assert_int_eq(out.status, TCC_ERROR_UNSUPPORTED);
    ck_assert_str_eq(tcc_last_error(ctx), "bfloat16 needs sm_80 or newer; the target is sm_75");
    out = generated(k, TCC_SM_80);
    assert_contains(out.llvm_ir, "fptrunc float");
    check_ptxas(out.ptx, TCC_SM_80);
    output_free(&out);
}
END_TEST

/* One context per thread: each owns its LLVM context and target machines. */
static void *compile_in_thread(void *arg)
{
    tcc_arch arch = *(const tcc_arch *)arg;
    tcc_context *thread_ctx = NULL;
    if (tcc_context_create(&thread_ctx) != TCC_OK)
        return (void *)"no context";
    const char *result = NULL;
    for (int i = 0; i < 4 && !result; i++) {
        ir_setup(); /* this thread's own arena */
        PrimFunc *k = i % 2 ? vector_add_kernel() : wmma_kernel(16 * 32);
        Output out = generate(thread_ctx, k, arch);
        if (out.status != TCC_OK || !strstr(out.ptx, ".entry"))
            result = "codegen failed";
        output_free(&out);
        ir_teardown();
    }
    tcc_context_destroy(thread_ctx);
    return (void *)result;
}

/* Y (float32, two a thread) = registers `first` and first + 1 of a WMMA accumulator filled
 * with zeros: the epilogue from registers reads a fragment by register number. */
static PrimFunc *register_read_kernel(Expr *(*first)(Expr *tx))
{
    Buffer *Y = f32_buffer("Y", TCC_SCOPE_GLOBAL, 64);
    Buffer *params[] = {Y};
    PrimFunc *k = ir_kernel("register_read", 1, params);
    Var *tx = ir_launch(k, TCC_THREAD_X, 32, tci_prim_func_new_var(k, "threadIdx.x"));
    Buffer *acc = buffer1("c", TCC_FLOAT32, TCC_SCOPE_WMMA_ACCUMULATOR, 256);
    Expr *t = tci_ir_var(arena, tx);
    Expr *pair = tci_ir_ramp(arena, mul(t, 2), 1, 2);
    Expr *reg = tci_ir_ramp(arena, first(t), 1, 2);
    Stmt *read = store1(Y, pair, load1(acc, reg));
    Stmt *body = tci_stmt_seq2(arena, wmma_zero(16, 16, 16, acc), read);
    k->body = tci_stmt_thread(arena, tx, TCC_THREAD_X, 32, tci_stmt_allocate(arena, acc, body));
    return k;
}

static Expr *register_two(Expr *tx)
{
    (void)tx;
    return num(2);
}

static Expr *register_of_thread(Expr *tx)
{
    return tx;
}

START_TEST(test_reads_accumulator_registers)
{
    Output out = generated(register_read_kernel(register_two), TCC_SM_80);
    ck_assert_msg(!strstr(out.llvm_ir, "alloca"), "an alloca survived:\n%s", out.llvm_ir);
    assert_contains(out.ptx, "st.global.v2.f32");
    output_free(&out);
    Output refused = generate(ctx, register_read_kernel(register_of_thread), TCC_SM_80);
    ck_assert_int_eq(refused.status, TCC_ERROR_UNSUPPORTED);
    assert_contains(tcc_last_error(ctx), "is read at a register that is not a constant");
}
END_TEST

START_TEST(test_two_threads)
{
    tcc_arch archs[2] = {TCC_SM_80, TCC_SM_90};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&threads[i], NULL, compile_in_thread, &archs[i]), 0);
    for (int i = 0; i < 2; i++) {
        void *result = NULL;
        ck_assert_int_eq(pthread_join(threads[i], &result), 0);
        ck_assert_msg(result == NULL, "thread %d: %s", i, (const char *)result);
    }
}
END_TEST

START_TEST(test_build_options_init)
{
    tcc_build_options options;
    memset(&options, 0xff, sizeof options);
    tcc_build_options_init(&options);
    ck_assert_int_eq(options.arch, TCC_SM_80);
    ck_assert_int_eq(options.auto_unroll_max_step, 16);
    ck_assert_ptr_null(options.print_after_pass);
    ck_assert_ptr_null(options.print_callback);
    ck_assert_ptr_null(options.print_user);
}
END_TEST

static Suite *codegen_suite(void)
{
    Suite *suite = suite_create("codegen");
    TCase *tc = test_case(suite, "codegen", ir_context_setup, ir_context_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_vector_add);
    tcase_add_test(tc, test_guarded_load_is_branched);
    tcase_add_test(tc, test_wmma_kernel);
    tcase_add_test(tc, test_ptxas_all_archs);
    tcase_add_test(tc, test_wmma_table);
    tcase_add_test(tc, test_wmma_col_major);
    tcase_add_test(tc, test_refuses_too_much_shared_memory);
    tcase_add_test(tc, test_refuses_too_many_threads);
    tcase_add_test(tc, test_intrinsic_names_resolve);
    tcase_add_test(tc, test_refuses_unsupported_arch);
    tcase_add_test(tc, test_refuses_huge_schedule_knobs);
    tcase_add_test(tc, test_null_descriptors_say_so);
    tcase_add_test(tc, test_bfloat16_needs_sm80);
    tcase_add_test(tc, test_reads_accumulator_registers);
    tcase_add_test(tc, test_two_threads);
    tcase_add_test(tc, test_build_options_init);
    return suite;
}

TEST_MAIN(codegen_suite)
