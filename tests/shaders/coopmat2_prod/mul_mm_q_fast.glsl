// The fast path of mul_mm_q.comp for one tile width: included with TILE_N (columns of the
// accumulator: rows of B) and TILE_FN (the function's name) defined. Every row of the tile lies
// inside A and B and the K range is whole K steps, so A and B read through unclamped layouts;
// D is stored through its clamped layout, which drops rows past N.
void TILE_FN(const in tensorLayoutNV<2> tA, const in tensorLayoutNV<2, CLAMPED> tAClamp,
             const in tensorLayoutNV<2> tB, const in tensorLayoutNV<2, CLAMPED> tD,
             const uint start_k, const uint end_k) {
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);
    ACC(TILE_N) sum = ACC(TILE_N)(0.0);
    uint k = start_k;
    const uint unrolled_end = start_k + (end_k - start_k) / (UNROLL * BK) * (UNROLL * BK);
    while (k < unrolled_end) {
        [[unroll]] for (uint j = 0; j < UNROLL; ++j) {
            MAT_A a = load_a(tA, tAClamp, true, k);
            MAT_B(TILE_N) b;
            coopMatLoadTensorNV(b, data_b, pos_b, sliceTensorLayoutNV(tB, ic * BN, TILE_N, k, BK), transposed);
            sum = coopMatMulAdd(a, b, sum);
            k += BK;
        }
    }
    [[dont_unroll]]
    for (; k < end_k; k += BK) {
        MAT_A a = load_a(tA, tAClamp, true, k);
        MAT_B(TILE_N) b;
        coopMatLoadTensorNV(b, data_b, pos_b, sliceTensorLayoutNV(tB, ic * BN, TILE_N, k, BK), transposed);
        sum = coopMatMulAdd(a, b, sum);
    }
    coopMatStoreTensorNV(sum, data_d, pos_d, sliceTensorLayoutNV(tD, ic * BN, TILE_N, ir * BM, BM), transposed);
}
