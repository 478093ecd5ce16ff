//! The seeded visible:hidden split of extended test lists (HumanEval-ET, MBPP-ET).

use rand::SeedableRng;
use rand::seq::SliceRandom;
use sha2::{Digest, Sha256};

/// The default seed; a run's manifest records the seed it used.
pub const DEFAULT_SPLIT_SEED: u64 = 2410_01242;

/// Shuffles `tests` with a generator seeded by (seed, task id) and returns (visible, hidden) with
/// 60 % (at least one) visible. Seeding per task keeps a task's split stable when the file changes
/// around it.
pub fn split_visible_hidden<T: Clone>(tests: &[T], task_id: &str, seed: u64) -> (Vec<T>, Vec<T>) {
    let mut hasher = Sha256::new();
    hasher.update(seed.to_le_bytes());
    hasher.update(task_id.as_bytes());
    let digest = hasher.finalize();
    let mut key = [0u8; 32];
    key.copy_from_slice(&digest);
    let mut rng = rand_chacha::ChaCha8Rng::from_seed(key);
    let mut shuffled = tests.to_vec();
    shuffled.shuffle(&mut rng);
    let visible = if tests.is_empty() {
        0
    } else {
        (tests.len() * 6).div_ceil(10).max(1)
    };
    let hidden = shuffled.split_off(visible);
    (shuffled, hidden)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_six_to_four_stable_and_disjoint() {
        let tests: Vec<u32> = (0..10).collect();
        let (v, h) = split_visible_hidden(&tests, "T/1", 7);
        assert_eq!((v.len(), h.len()), (6, 4));
        assert_eq!(split_visible_hidden(&tests, "T/1", 7), (v.clone(), h.clone()));
        let mut all: Vec<u32> = v.iter().chain(h.iter()).copied().collect();
        all.sort();
        assert_eq!(all, tests);
        assert_ne!(split_visible_hidden(&tests, "T/1", 8).0, v, "another seed gives another split");
    }
}
