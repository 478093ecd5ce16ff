//! Score fusion that the memory pool (`Fusion::Rrf`) and a repository's retrieval (`fuse`) share:
//! reciprocal rank fusion (Cormack et al.), each list's contribution falling with the rank.

/// What a list contributes for an item at 0-based `rank`, with `weight` and damping `k`.
pub fn reciprocal_rank(weight: f32, k: f32, rank: usize) -> f32 {
    weight / (k + rank as f32 + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_rank_counts_most_and_k_damps_the_difference() {
        assert_eq!(reciprocal_rank(1.0, 60.0, 0), 1.0 / 61.0);
        assert!(reciprocal_rank(1.0, 5.0, 0) > reciprocal_rank(1.0, 5.0, 1));
        let gap = |k: f32| reciprocal_rank(1.0, k, 0) / reciprocal_rank(1.0, k, 9);
        assert!(gap(5.0) > gap(60.0), "a larger k flattens the ranks");
        assert_eq!(reciprocal_rank(2.0, 5.0, 3), 2.0 * reciprocal_rank(1.0, 5.0, 3));
    }
}
