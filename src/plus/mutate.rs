//! Type-aware mutation of test inputs (EvalPlus's, without its LLM seeds): a value becomes another
//! of the same type near it (an int moved a little or to a value the task's tests use, a string
//! with a character dropped, repeated or replaced, a list with an element removed, repeated,
//! mutated or swapped), so generated inputs stay the kind of input the task is about. And the
//! domain its tests show: where every seed of an argument holds no negative number, or is one
//! character, its mutants do too. EvalPlus writes such contracts by hand for each task; without
//! them an input outside the task's domain (a count of "a given character" asked for "ab") makes
//! the reference's answer there the expected one, and a correct program fails it.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::literal::Lit;

/// Scalars the task's own inputs use, by type: what a mutation may put in (EvalPlus's
/// "ingredients").
#[derive(Debug, Default)]
pub struct Ingredients {
    ints: Vec<i64>,
    floats: Vec<f64>,
    strs: Vec<String>,
    /// What every seed of each argument position shows.
    domains: Vec<Domain>,
}

/// The domain the seeds of one argument position show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Domain {
    /// No number anywhere in it is negative.
    pub non_negative: bool,
    /// It is a string of exactly one character.
    pub one_char: bool,
}

impl Domain {
    fn of(seeds: &[&Lit]) -> Domain {
        Domain {
            non_negative: seeds.iter().all(|v| no_negative(v)),
            one_char: seeds.iter().all(|v| matches!(v, Lit::Str(s) if s.chars().count() == 1)),
        }
    }
}

fn no_negative(v: &Lit) -> bool {
    match v {
        Lit::Int(n) => *n >= 0,
        Lit::Float(f) => *f >= 0.0,
        Lit::List(xs) | Lit::Tuple(xs) | Lit::Set(xs) => xs.iter().all(no_negative),
        Lit::Dict(p) => p.iter().all(|(k, x)| no_negative(k) && no_negative(x)),
        Lit::Str(_) | Lit::None | Lit::Bool(_) => true,
    }
}

/// `v` with every negative number made positive.
fn without_negatives(v: Lit) -> Lit {
    match v {
        Lit::Int(n) => Lit::Int(n.saturating_abs()),
        Lit::Float(f) => Lit::Float(f.abs()),
        Lit::List(xs) => Lit::List(xs.into_iter().map(without_negatives).collect()),
        Lit::Tuple(xs) => Lit::Tuple(xs.into_iter().map(without_negatives).collect()),
        Lit::Set(xs) => Lit::Set(xs.into_iter().map(without_negatives).collect()),
        Lit::Dict(p) => Lit::Dict(p.into_iter().map(|(k, x)| (without_negatives(k), without_negatives(x))).collect()),
        other => other,
    }
}

impl Ingredients {
    pub fn of(inputs: &[Vec<Lit>]) -> Ingredients {
        let mut i = Ingredients::default();
        for args in inputs {
            for a in args {
                i.gather(a);
            }
        }
        i.ints.sort_unstable();
        i.ints.dedup();
        i.floats.sort_by(f64::total_cmp);
        i.floats.dedup();
        i.strs.sort();
        i.strs.dedup();
        let arity = inputs.iter().map(Vec::len).max().unwrap_or(0);
        i.domains = (0..arity)
            .map(|at| Domain::of(&inputs.iter().filter_map(|args| args.get(at)).collect::<Vec<_>>()))
            .collect();
        i
    }

    fn gather(&mut self, v: &Lit) {
        match v {
            Lit::Int(n) => self.ints.push(*n),
            Lit::Float(f) => self.floats.push(*f),
            Lit::Str(s) => self.strs.push(s.clone()),
            Lit::List(xs) | Lit::Tuple(xs) | Lit::Set(xs) => xs.iter().for_each(|x| self.gather(x)),
            Lit::Dict(p) => p.iter().for_each(|(k, x)| {
                self.gather(k);
                self.gather(x)
            }),
            Lit::None | Lit::Bool(_) => {}
        }
    }
}

/// Generated values stay small: a string or list is not grown past this.
const MAX_LEN: usize = 64;
/// Nor an int past this magnitude (a loop over range(n) must stay quick in the sandbox).
const MAX_INT: i64 = 1 << 20;

/// A seeded mutator: the same seed and inputs give the same mutants.
pub struct Mutator<'a> {
    rng: ChaCha8Rng,
    ingredients: &'a Ingredients,
}

impl<'a> Mutator<'a> {
    pub fn new(seed: u64, ingredients: &'a Ingredients) -> Mutator<'a> {
        Mutator {
            rng: ChaCha8Rng::seed_from_u64(seed),
            ingredients,
        }
    }

    /// One of `pool`'s inputs (`pool` is not empty).
    pub fn pick_input(&mut self, pool: &[Vec<Lit>]) -> Vec<Lit> {
        self.pick(pool).unwrap_or_default()
    }

    /// `args` with one argument mutated, kept in the domain its seeds show.
    pub fn mutate_args(&mut self, args: &[Lit]) -> Vec<Lit> {
        let mut out = args.to_vec();
        if !out.is_empty() {
            let at = self.rng.random_range(0..out.len());
            let mutated = self.mutate(&out[at]);
            out[at] = self.fit(at, mutated);
        }
        out
    }

    fn fit(&mut self, at: usize, v: Lit) -> Lit {
        let Some(domain) = self.ingredients.domains.get(at).copied() else {
            return v;
        };
        let v = if domain.non_negative { without_negatives(v) } else { v };
        match v {
            Lit::Str(s) if domain.one_char && s.chars().count() != 1 => {
                let chars: Vec<char> = s.chars().collect();
                let one = match chars.is_empty() {
                    true => self.pick(&self.ingredients.strs).and_then(|s| s.chars().next()).unwrap_or('a'),
                    false => chars[self.rng.random_range(0..chars.len())],
                };
                Lit::Str(one.to_string())
            }
            other => other,
        }
    }

    fn pick<T: Clone>(&mut self, from: &[T]) -> Option<T> {
        (!from.is_empty()).then(|| from[self.rng.random_range(0..from.len())].clone())
    }

    /// A value of the same type near `v`.
    pub fn mutate(&mut self, v: &Lit) -> Lit {
        match v {
            Lit::None => Lit::None,
            Lit::Bool(b) => Lit::Bool(!b),
            Lit::Int(n) => Lit::Int(self.int(*n)),
            Lit::Float(f) => Lit::Float(self.float(*f)),
            Lit::Str(s) => Lit::Str(self.string(s)),
            Lit::List(xs) => Lit::List(self.sequence(xs, true)),
            Lit::Set(xs) => {
                let mut ys = self.sequence(xs, true);
                ys.dedup_by(|a, b| a == b);
                Lit::Set(ys)
            }
            // A tuple is usually a record: same length, one field changed.
            Lit::Tuple(xs) => Lit::Tuple(self.sequence(xs, false)),
            Lit::Dict(pairs) => Lit::Dict(self.dict(pairs)),
        }
    }

    fn int(&mut self, n: i64) -> i64 {
        let ing = self.ingredients;
        let ingredient = self.pick(&ing.ints);
        let m = match self.rng.random_range(0..6) {
            0 => n.saturating_add(1),
            1 => n.saturating_sub(1),
            2 => n.saturating_mul(2),
            3 => n / 2,
            4 => ingredient.unwrap_or(0),
            _ => {
                let span = n.unsigned_abs().clamp(8, 1000) as i64;
                n.saturating_add(self.rng.random_range(-span..=span))
            }
        };
        m.clamp(-MAX_INT, MAX_INT)
    }

    fn float(&mut self, f: f64) -> f64 {
        let ing = self.ingredients;
        let ingredient = self.pick(&ing.floats);
        let m = match self.rng.random_range(0..5) {
            0 => f + 1.0,
            1 => f - 1.0,
            2 => f * 2.0,
            3 => ingredient.unwrap_or(0.0),
            _ => f + self.rng.random_range(-10.0..10.0),
        };
        // Two decimals: outputs stay comparable without chasing the last bit.
        let m = (m * 100.0).round() / 100.0;
        if m.is_finite() { m } else { f }
    }

    fn string(&mut self, s: &str) -> String {
        let ing = self.ingredients;
        let chars: Vec<char> = s.chars().collect();
        if chars.is_empty() {
            return self.pick(&ing.strs).unwrap_or_else(|| "a".into());
        }
        let at = self.rng.random_range(0..chars.len());
        let mut out = chars.clone();
        match self.rng.random_range(0..5) {
            0 => {
                out.remove(at);
            }
            1 if chars.len() < MAX_LEN => {
                // A stretch repeated.
                let end = self.rng.random_range(at..chars.len()) + 1;
                let piece: Vec<char> = chars[at..end].to_vec();
                out.splice(at..at, piece);
            }
            2 => {
                // A character of its own or of another input's.
                let from = self.pick(&ing.strs).unwrap_or_else(|| s.to_string());
                let pool: Vec<char> = from.chars().chain(chars.iter().copied()).collect();
                out[at] = pool[self.rng.random_range(0..pool.len())];
            }
            3 if chars.len() < MAX_LEN => {
                let c = chars[self.rng.random_range(0..chars.len())];
                out.insert(at, c);
            }
            _ => {
                let other = self.rng.random_range(0..chars.len());
                out.swap(at, other);
            }
        }
        out.truncate(MAX_LEN);
        out.into_iter().collect()
    }

    /// A list's (or, when `resize` is false, a tuple's) elements, one change.
    fn sequence(&mut self, xs: &[Lit], resize: bool) -> Vec<Lit> {
        let mut out = xs.to_vec();
        if out.is_empty() {
            return out;
        }
        let at = self.rng.random_range(0..out.len());
        match (resize, self.rng.random_range(0..5)) {
            (true, 0) => {
                out.remove(at);
            }
            (true, 1) if out.len() < MAX_LEN => {
                let copy = self.mutate(&out[at]);
                let to = self.rng.random_range(0..=out.len());
                out.insert(to, copy);
            }
            (true, 2) if out.len() < MAX_LEN => {
                let copy = out[at].clone();
                out.insert(at, copy);
            }
            (_, 3) => {
                let other = self.rng.random_range(0..out.len());
                out.swap(at, other);
            }
            _ => out[at] = self.mutate(&out[at]),
        }
        out
    }

    fn dict(&mut self, pairs: &[(Lit, Lit)]) -> Vec<(Lit, Lit)> {
        let mut out = pairs.to_vec();
        if out.is_empty() {
            return out;
        }
        let at = self.rng.random_range(0..out.len());
        match self.rng.random_range(0..3) {
            0 => {
                out.remove(at);
            }
            1 if out.len() < MAX_LEN => {
                let key = self.mutate(&out[at].0);
                if !out.iter().any(|(k, _)| *k == key) {
                    let value = self.mutate(&out[at].1);
                    out.push((key, value));
                }
            }
            _ => out[at].1 = self.mutate(&out[at].1),
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> Vec<Vec<Lit>> {
        vec![vec![
            Lit::List(vec![Lit::Int(3), Lit::Int(1)]),
            Lit::Str("abc".into()),
            Lit::Tuple(vec![Lit::Int(1), Lit::Float(2.5)]),
        ]]
    }

    #[test]
    fn the_same_seed_gives_the_same_mutants_and_types_are_kept() {
        let seeds = inputs();
        let ing = Ingredients::of(&seeds);
        let run = |seed| {
            let mut m = Mutator::new(seed, &ing);
            (0..50).map(|_| m.mutate_args(&seeds[0])).collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        for args in run(7) {
            assert!(matches!(args[0], Lit::List(_)) && matches!(args[1], Lit::Str(_)), "{args:?}");
            let Lit::Tuple(t) = &args[2] else { panic!("{args:?}") };
            assert_eq!(t.len(), 2, "a tuple keeps its length");
        }
    }

    #[test]
    fn mutants_stay_in_the_domain_every_seed_shows() {
        // `count(s, c)`: c is always one character; the numbers are never negative.
        let seeds = vec![
            vec![
                Lit::Str("abca".into()),
                Lit::Str("a".into()),
                Lit::List(vec![Lit::Int(0), Lit::Int(3)]),
            ],
            vec![Lit::Str("xyz".into()), Lit::Str("z".into()), Lit::List(vec![Lit::Int(1)])],
        ];
        let ing = Ingredients::of(&seeds);
        let mut m = Mutator::new(3, &ing);
        let mut pool = seeds.clone();
        for _ in 0..400 {
            let from = m.pick_input(&pool);
            let args = m.mutate_args(&from);
            assert!(matches!(&args[1], Lit::Str(c) if c.chars().count() == 1), "{args:?}");
            assert!(no_negative(&args[2]), "{args:?}");
            pool.push(args);
        }
        // Where a seed shows a negative number or a longer string, mutants may too.
        let free = Ingredients::of(&[vec![Lit::Int(-1), Lit::Str("ab".into())]]);
        assert_eq!(
            free.domains,
            vec![
                Domain {
                    non_negative: false,
                    one_char: false
                },
                Domain {
                    non_negative: true,
                    one_char: false
                }
            ]
        );
    }
}
