//! The statistics a comparison of two methods needs: an interval for a pass rate, a paired test
//! on the tasks one solved and the other did not, and a paired bootstrap interval of the difference.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};

/// The 95% Wilson score interval of `k` successes in `n` trials ((0, 0) for no trials).
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 0.0);
    }
    let z = z95();
    let (n, p) = (n as f64, k as f64 / n as f64);
    let denom = 1.0 + z * z / n;
    let center = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    // At 0 and at n the bound is exactly 0 (or 1); the formula leaves rounding dust there.
    let lo = if k == 0 { 0.0 } else { (center - half).max(0.0) };
    let hi = if k as f64 == n { 1.0 } else { (center + half).min(1.0) };
    (lo, hi)
}

fn z95() -> f64 {
    Normal::standard().inverse_cdf(0.975)
}

/// McNemar's exact test, two-sided: the binomial test of `b` against `c` discordant pairs at 1/2.
pub fn mcnemar_exact(b: usize, c: usize) -> f64 {
    let n = (b + c) as u64;
    if n == 0 {
        return 1.0;
    }
    match Binomial::new(0.5, n) {
        Ok(binomial) => (2.0 * binomial.cdf(b.min(c) as u64)).min(1.0),
        Err(_) => 1.0,
    }
}

/// Resamples a paired bootstrap draws.
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;
/// Its seed: the same runs give the same interval.
pub const BOOTSTRAP_SEED: u64 = 0;

/// The 95% paired bootstrap interval of pass@1(b) - pass@1(a) over the same tasks (tasks drawn
/// with replacement, each keeping both outcomes).
pub fn paired_bootstrap(a: &[bool], b: &[bool]) -> (f64, f64) {
    let n = a.len().min(b.len());
    if n == 0 {
        return (0.0, 0.0);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(BOOTSTRAP_SEED);
    let mut deltas: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| {
            let sum: i64 = (0..n)
                .map(|_| {
                    let i = rng.random_range(0..n);
                    i64::from(b[i]) - i64::from(a[i])
                })
                .sum();
            sum as f64 / n as f64
        })
        .collect();
    deltas.sort_by(f64::total_cmp);
    let at = |q: f64| deltas[((deltas.len() - 1) as f64 * q).round() as usize];
    (at(0.025), at(0.975))
}

/// The unbiased estimator of pass@k (Chen et al., HumanEval) for one task with `n` samples of
/// which `c` are correct: 1 - C(n-c, k) / C(n, k), computed as a product to stay exact in f64.
pub fn pass_at_k(n: usize, c: usize, k: usize) -> f64 {
    if n < k || k == 0 {
        return f64::NAN;
    }
    if n - c < k {
        return 1.0;
    }
    1.0 - ((n - c + 1)..=n).map(|i| 1.0 - k as f64 / i as f64).product::<f64>()
}

#[cfg(test)]
mod tests {
    #[test]
    fn pass_at_k_is_the_unbiased_estimator() {
        assert_eq!(super::pass_at_k(1, 1, 1), 1.0);
        assert_eq!(super::pass_at_k(1, 0, 1), 0.0);
        assert!((super::pass_at_k(10, 3, 1) - 0.3).abs() < 1e-12);
        // 1 - C(7,5)/C(10,5) = 1 - 21/252.
        assert!((super::pass_at_k(10, 3, 5) - (1.0 - 21.0 / 252.0)).abs() < 1e-12);
        assert_eq!(super::pass_at_k(10, 6, 5), 1.0);
        assert!(super::pass_at_k(3, 1, 5).is_nan());
    }

    use super::*;

    #[test]
    fn mcnemar_matches_the_exact_binomial_test() {
        assert!((mcnemar_exact(3, 0) - 0.25).abs() < 1e-12);
        assert!((mcnemar_exact(0, 3) - 0.25).abs() < 1e-12);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        assert_eq!(mcnemar_exact(2, 2), 1.0);
        // 10 against 2: 2 * P(X <= 2), X ~ Bin(12, 1/2) = 2 * 79 / 4096.
        assert!((mcnemar_exact(10, 2) - 2.0 * 79.0 / 4096.0).abs() < 1e-12);
    }

    #[test]
    fn wilson_is_the_textbook_interval() {
        let (lo, hi) = wilson(5, 10);
        assert!((lo - 0.2366).abs() < 1e-3 && (hi - 0.7634).abs() < 1e-3, "{lo} {hi}");
        let (lo, hi) = wilson(0, 20);
        assert_eq!(lo, 0.0);
        assert!((hi - 0.1611).abs() < 1e-3, "{hi}");
    }

    #[test]
    fn the_bootstrap_brackets_the_difference_and_is_seeded() {
        let a = [false; 20];
        let mut b = [false; 20];
        b[..5].fill(true);
        let (lo, hi) = paired_bootstrap(&a, &b);
        assert!(lo > 0.0 && lo < 0.25 && hi > 0.25 && hi <= 0.5, "{lo} {hi}");
        assert_eq!((lo, hi), paired_bootstrap(&a, &b));
        assert_eq!(paired_bootstrap(&a, &a), (0.0, 0.0));
    }
}
