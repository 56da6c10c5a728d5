//! A generator that draws the same numbers as Go's `math/rand` seeded with `rand.Seed(s)`.
//!
//! The FGD peer shuffles its pods, inflates the workload and numbers its nodes with Go's
//! global `math/rand` source. Drawing the very same numbers lets gpusched replay the
//! peer's ten seeds exactly instead of only statistically.
//!
//! Go's source is an additive lagged Fibonacci generator over 64-bit words,
//! `w[t] = w[t-607] + w[t-273]`, whose 607 seed words are XORed with a fixed "cooked"
//! vector: the generator's own state after 7.8e12 steps from seed 1. Rather than carry
//! that table, we compute it: the recurrence is linear, so the state after N steps is
//! `x^N mod (x^607 - x^334 - 1)` applied to the start state (square-and-multiply over
//! polynomials with wrapping 64-bit coefficients, a few million multiply-adds, done once
//! per process).

use std::sync::OnceLock;

const LEN: usize = 607;
const TAP: usize = 273;
/// `w[t] = w[t-607] + w[t-273]` has characteristic polynomial `x^607 - x^334 - 1`.
const MID: usize = LEN - TAP;
const MASK63: u64 = (1 << 63) - 1;
const INT32_MAX: i64 = (1 << 31) - 1;
/// Steps Go ran from seed 1 to make its cooked vector.
const COOK_STEPS: u64 = 7_800_000_000_000;

/// One step of the Park-Miller generator Go seeds with (Schrage's method, as Go does it).
fn seedrand(x: i32) -> i32 {
    const A: i32 = 48271;
    const Q: i32 = 44488;
    const R: i32 = 3399;
    let hi = x / Q;
    let lo = x % Q;
    let mut x = A.wrapping_mul(lo).wrapping_sub(R.wrapping_mul(hi));
    if x < 0 {
        x = x.wrapping_add(INT32_MAX as i32);
    }
    x
}

/// `a * b mod P` for polynomials of degree < 607 with wrapping coefficients.
fn mul_mod(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut prod = vec![0u64; 2 * LEN - 1];
    for (i, &ai) in a.iter().enumerate() {
        if ai == 0 {
            continue;
        }
        for (j, &bj) in b.iter().enumerate() {
            prod[i + j] = prod[i + j].wrapping_add(ai.wrapping_mul(bj));
        }
    }
    reduce(prod)
}

/// Folds degrees >= 607 down with `x^607 = x^334 + 1`, highest first so that folded
/// terms that are still high get folded again.
fn reduce(mut p: Vec<u64>) -> Vec<u64> {
    for d in (LEN..p.len()).rev() {
        let c = p[d];
        if c != 0 {
            p[d - LEN + MID] = p[d - LEN + MID].wrapping_add(c);
            p[d - LEN] = p[d - LEN].wrapping_add(c);
        }
    }
    p.truncate(LEN);
    p
}

/// `x^n mod P`.
fn x_pow(n: u64) -> Vec<u64> {
    let mut result = vec![0u64; LEN];
    result[0] = 1;
    for bit in (0..64).rev() {
        result = mul_mod(&result, &result);
        if n >> bit & 1 == 1 {
            // Multiply by x: shift up one degree, then fold.
            let mut shifted = vec![0u64; LEN + 1];
            shifted[1..].copy_from_slice(&result);
            result = reduce(shifted);
        }
    }
    result
}

/// The index of the state vector that step `t` writes (Go decrements `feed` from 334).
fn feed_index(t: i64) -> usize {
    (MID as i64 - t).rem_euclid(LEN as i64) as usize
}

/// Go's cooked vector, computed (see the module comment).
fn cooked() -> &'static [u64; LEN] {
    static COOKED: OnceLock<[u64; LEN]> = OnceLock::new();
    COOKED.get_or_init(|| {
        // The start state of Go's gen_cooked: seed 1, three draws per word at shifts 20/10/0.
        let mut start = [0u64; LEN];
        let mut x: i32 = 1;
        for i in -20i32..LEN as i32 {
            x = seedrand(x);
            if i >= 0 {
                let mut u = (x as i64) << 20;
                x = seedrand(x);
                u ^= (x as i64) << 10;
                x = seedrand(x);
                u ^= x as i64;
                start[i as usize] = u as u64;
            }
        }
        // Number the words as one sequence: vec[i] at the start holds w[t] for the t in
        // -606..=0 whose step would write slot i; u[k] = w[k - 606].
        let mut u = [0u64; LEN];
        for t in -(LEN as i64 - 1)..=0 {
            u[(t + LEN as i64 - 1) as usize] = start[feed_index(t)];
        }
        // After N steps slot i holds the w[t] of the last step t <= N that wrote it:
        // the steps N-606..=N write every slot once.
        let n = COOK_STEPS;
        let mut coeffs = x_pow(n);
        // coeffs now expresses u[N] (= w[N - 606]); walk up to u[N + 606] (= w[N]).
        let mut out = [0u64; LEN];
        for k in 0..LEN as u64 {
            let value = coeffs
                .iter()
                .zip(u.iter())
                .fold(0u64, |acc, (c, v)| acc.wrapping_add(c.wrapping_mul(*v)));
            let t = (n + k) as i64 - (LEN as i64 - 1);
            out[feed_index(t)] = value;
            let mut shifted = vec![0u64; LEN + 1];
            shifted[1..].copy_from_slice(&coeffs);
            coeffs = reduce(shifted);
        }
        out
    })
}

/// Go's `rand.New(rand.NewSource(seed))`, with the methods the FGD experiment uses.
#[derive(Clone)]
pub struct GoRand {
    vec: [u64; LEN],
    tap: usize,
    feed: usize,
}

impl GoRand {
    pub fn new(seed: i64) -> Self {
        let cooked = cooked();
        let mut seed = seed % INT32_MAX;
        if seed < 0 {
            seed += INT32_MAX;
        }
        if seed == 0 {
            seed = 89_482_311;
        }
        let mut vec = [0u64; LEN];
        let mut x = seed as i32;
        for i in -20i32..LEN as i32 {
            x = seedrand(x);
            if i >= 0 {
                let mut u = (x as i64) << 40;
                x = seedrand(x);
                u ^= (x as i64) << 20;
                x = seedrand(x);
                u ^= x as i64;
                vec[i as usize] = (u as u64) ^ cooked[i as usize];
            }
        }
        GoRand {
            vec,
            tap: 0,
            feed: MID,
        }
    }

    pub fn uint64(&mut self) -> u64 {
        self.tap = if self.tap == 0 { LEN - 1 } else { self.tap - 1 };
        self.feed = if self.feed == 0 {
            LEN - 1
        } else {
            self.feed - 1
        };
        let x = self.vec[self.feed].wrapping_add(self.vec[self.tap]);
        self.vec[self.feed] = x;
        x
    }

    pub fn int63(&mut self) -> i64 {
        (self.uint64() & MASK63) as i64
    }

    fn int31(&mut self) -> i32 {
        (self.int63() >> 32) as i32
    }

    fn uint32(&mut self) -> u32 {
        (self.int63() >> 31) as u32
    }

    /// Go's `Int31n`: rejection sampling on `Int31`.
    fn int31n(&mut self, n: i32) -> i32 {
        if n & (n - 1) == 0 {
            return self.int31() & (n - 1);
        }
        let max = ((1u32 << 31) - 1 - (1u32 << 31) % n as u32) as i32;
        let mut v = self.int31();
        while v > max {
            v = self.int31();
        }
        v % n
    }

    /// Go's unexported `int31n` (Lemire's method), which `Shuffle` uses.
    fn int31n_lemire(&mut self, n: i32) -> i32 {
        let n = n as u32;
        let mut prod = u64::from(self.uint32()) * u64::from(n);
        if (prod as u32) < n {
            let thresh = n.wrapping_neg() % n;
            while (prod as u32) < thresh {
                prod = u64::from(self.uint32()) * u64::from(n);
            }
        }
        (prod >> 32) as i32
    }

    /// Go's `Intn` for `0 < n <= i32::MAX` (all the experiment needs).
    pub fn intn(&mut self, n: usize) -> usize {
        debug_assert!(n > 0 && n <= i32::MAX as usize);
        self.int31n(n as i32) as usize
    }

    /// Go's `Int` on a 64-bit machine.
    pub fn int(&mut self) -> i64 {
        self.int63()
    }

    /// Go's `Shuffle` (Fisher-Yates from the back).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.int31n_lemire((i + 1) as i32) as usize;
            items.swap(i, j);
        }
    }

    /// Go's `Perm`.
    pub fn perm(&mut self, n: usize) -> Vec<usize> {
        let mut m = vec![0usize; n];
        for i in 0..n {
            let j = self.intn(i + 1);
            m[i] = m[j];
            m[j] = i;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values printed by Go 1.19's math/rand on the same calls.
    #[test]
    fn matches_go_math_rand() {
        let mut r = GoRand::new(42);
        assert_eq!(
            [r.int63(), r.int63(), r.int63()],
            [3440579354231278675, 608747136543856411, 5571782338101878760]
        );
        let mut r = GoRand::new(51);
        assert_eq!(
            [r.int63(), r.int63()],
            [3893522058333705853, 6164845938608892732]
        );
        let mut r = GoRand::new(42);
        assert_eq!(r.int(), 3440579354231278675);
        let mut a: Vec<usize> = (0..10).collect();
        r.shuffle(&mut a);
        assert_eq!(a, [6, 8, 3, 7, 4, 2, 9, 1, 5, 0]);
        assert_eq!([r.intn(8152), r.intn(8152), r.intn(7)], [305, 3343, 2]);
        assert_eq!(r.perm(10), [3, 4, 7, 2, 9, 6, 8, 1, 5, 0]);
    }
}
