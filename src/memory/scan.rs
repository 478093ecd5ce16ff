//! The first SBERT pass: find the rows most similar to the query without reading every float.
//! At 100k entries the float matrix is 154 MB and even the int8 copy is 38 MB, more than this
//! machine reads in 5 ms, so large pools are first ranked by the Hamming distance between sign
//! bits (48 bytes a row, 4.8 MB at 100k), a shortlist is re-ranked with int8 dot products, and
//! exact float cosines are computed afterwards for the final candidates only. Small pools skip
//! the sign pass. The benchmark checks the result against exhaustive float search.

use super::embed::DIM;

/// u64 words of sign bits per row.
pub const WORDS: usize = DIM / 64;

/// Below this many rows the int8 pass reads little enough to do alone.
const SIGNS_FROM: usize = 20_000;

/// Rows kept by the sign pass for the int8 pass: generous, as sign bits are a coarse measure.
fn shortlist(count: usize) -> usize {
    (count * 20).max(2_000)
}

/// A vector's sign bits (bit j of the row set when component j is positive).
pub fn signs(v: &[f32]) -> Vec<u64> {
    let mut words = vec![0u64; v.len().div_ceil(64)];
    for (j, x) in v.iter().enumerate() {
        if *x > 0.0 {
            words[j / 64] |= 1 << (j % 64);
        }
    }
    words
}

/// Indices (unordered) of the `count` rows most similar to the query: `matrix` holds the int8
/// rows, `sign_rows` their sign bits (`WORDS` per row).
pub fn top_rows(matrix: &[i8], sign_rows: &[u64], query8: &[i8], query_signs: &[u64], count: usize) -> Vec<usize> {
    let rows = matrix.len() / DIM;
    if rows < SIGNS_FROM || shortlist(count) >= rows {
        return top_by_int8(matrix, query8, count);
    }
    let mut near = Vec::with_capacity(rows);
    hammings(sign_rows, query_signs, &mut near);
    let keep = shortlist(count);
    near.select_nth_unstable_by(keep, |a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    near.truncate(keep);
    let mut scored: Vec<(i32, usize)> = near
        .into_iter()
        .map(|(_, i)| (dot_row(&matrix[i * DIM..(i + 1) * DIM], query8), i))
        .collect();
    keep_best(&mut scored, count);
    scored.into_iter().map(|(_, i)| i).collect()
}

/// (Hamming distance to the query, row) for every row.
fn hammings(sign_rows: &[u64], query: &[u64], out: &mut Vec<(u32, usize)>) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has POPCNT (checked just above).
        unsafe { hammings_popcnt(sign_rows, query, out) };
        return;
    }
    hammings_portable(sign_rows, query, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn hammings_popcnt(sign_rows: &[u64], query: &[u64], out: &mut Vec<(u32, usize)>) {
    // Without the attribute `count_ones` is a dozen shifts and masks (the baseline x86-64 has
    // no POPCNT instruction).
    hammings_portable(sign_rows, query, out)
}

#[inline(always)]
fn hammings_portable(sign_rows: &[u64], query: &[u64], out: &mut Vec<(u32, usize)>) {
    out.extend(
        sign_rows
            .chunks_exact(WORDS)
            .enumerate()
            .map(|(i, row)| (row.iter().zip(query).map(|(x, y)| (x ^ y).count_ones()).sum(), i)),
    );
}

/// The `count` rows with the largest int8 dot product, by a pass over every row.
fn top_by_int8(matrix: &[i8], query: &[i8], count: usize) -> Vec<usize> {
    let mut scores = vec![0i32; matrix.len() / DIM];
    dots(matrix, query, &mut scores);
    let mut best: Vec<(i32, usize)> = scores.into_iter().enumerate().map(|(i, s)| (s, i)).collect();
    keep_best(&mut best, count);
    best.into_iter().map(|(_, i)| i).collect()
}

fn keep_best(scored: &mut Vec<(i32, usize)>, count: usize) {
    if count < scored.len() {
        scored.select_nth_unstable_by(count, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(count);
    }
}

/// `out[r] = matrix row r · query`, choosing the widest instruction set the CPU has.
fn dots(matrix: &[i8], query: &[i8], out: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { dots_avx2(matrix, query, out) };
        return;
    }
    dots_portable(matrix, query, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dots_avx2(matrix: &[i8], query: &[i8], out: &mut [i32]) {
    // The same code as the portable loop; the attribute lets the compiler vectorise it with
    // 256-bit registers (sign-extend to i16, multiply-add pairs to i32).
    dots_portable(matrix, query, out)
}

#[inline(always)]
fn dots_portable(matrix: &[i8], query: &[i8], out: &mut [i32]) {
    for (row, slot) in matrix.chunks_exact(DIM).zip(out.iter_mut()) {
        *slot = dot_row(row, query);
    }
}

#[inline(always)]
fn dot_row(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 16];
    for (x, y) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
        for i in 0..16 {
            acc[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    acc.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::embed::{normalise, quantize};

    /// Deterministic pseudo-random unit vectors.
    fn vector(seed: u64) -> Vec<f32> {
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut v: Vec<f32> = (0..DIM)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((x >> 33) as f32 / (1u64 << 31) as f32) - 0.5
            })
            .collect();
        normalise(&mut v);
        v
    }

    #[test]
    fn the_sign_pass_keeps_the_true_nearest_rows() {
        let rows = SIGNS_FROM + 5_000;
        let query = vector(1);
        // Every 1000th row is a disturbed copy of the query, each copy more disturbed than the
        // last (cosines from 0.995 down, clearly apart): the rows to find, in that order.
        let vectors: Vec<Vec<f32>> = (0..rows)
            .map(|i| {
                if i % 1000 == 0 {
                    let scale = 0.1 * (i / 1000 + 1) as f32;
                    let mut v: Vec<f32> = query.iter().zip(vector(i as u64 + 7)).map(|(q, n)| q + scale * n).collect();
                    normalise(&mut v);
                    v
                } else {
                    vector(i as u64 + 7)
                }
            })
            .collect();
        let matrix: Vec<i8> = vectors.iter().flat_map(|v| quantize(v)).collect();
        let sign_rows: Vec<u64> = vectors.iter().flat_map(|v| signs(v)).collect();
        let mut got = top_rows(&matrix, &sign_rows, &quantize(&query), &signs(&query), 10);
        got.sort_unstable();
        // The exact answer: float dot products over every row.
        let mut exact: Vec<(f32, usize)> = vectors
            .iter()
            .enumerate()
            .map(|(i, v)| (crate::memory::embed::dot(v, &query), i))
            .collect();
        exact.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut want: Vec<usize> = exact.iter().take(10).map(|(_, i)| *i).collect();
        want.sort_unstable();
        assert!(want.iter().all(|i| i % 1000 == 0), "the disturbed copies are the nearest rows");
        assert_eq!(got, want);
        // Small pools: the int8 pass alone, same answer.
        let small = 3_000;
        let mut got = top_rows(
            &matrix[..small * DIM],
            &sign_rows[..small * WORDS],
            &quantize(&query),
            &signs(&query),
            3,
        );
        got.sort_unstable();
        assert_eq!(got, vec![0, 1000, 2000]);
    }
}
