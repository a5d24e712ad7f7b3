//! The distribution of a metric over executions, in bounded memory.
//!
//! A run of a million seeds records a metric a million times; the report draws its
//! histogram. [`Histogram`] counts each distinct value exactly while there are at most
//! [`MAX_BINS`] of them (lost increments, retries, whole seconds: the usual case), and
//! past that rounds every value to fewer significant digits until they fit again, so its
//! memory never grows with the number of executions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Most distinct values kept.
pub const MAX_BINS: usize = 256;

/// Counts of a metric's values.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Histogram {
    /// Significant digits values are rounded to (`None`: exact).
    digits: Option<u32>,
    /// Value (as ordered bits) to count.
    #[serde(with = "bins")]
    counts: BTreeMap<OrderedF64, u64>,
}

/// An `f64` ordered by [`f64::total_cmp`].
#[derive(Debug, Clone, Copy, PartialEq)]
struct OrderedF64(f64);

impl Eq for OrderedF64 {}

impl PartialOrd for OrderedF64 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrderedF64 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The counts as a list of `[value, count]` pairs in JSON.
mod bins {
    use super::OrderedF64;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    pub fn serialize<S: Serializer>(
        m: &BTreeMap<OrderedF64, u64>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let pairs: Vec<(f64, u64)> = m.iter().map(|(k, v)| (k.0, *v)).collect();
        pairs.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<OrderedF64, u64>, D::Error> {
        let pairs = Vec::<(f64, u64)>::deserialize(d)?;
        Ok(pairs.into_iter().map(|(k, v)| (OrderedF64(k), v)).collect())
    }
}

/// `v` rounded to `digits` significant digits.
fn round(v: f64, digits: u32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let magnitude = v.abs().log10().floor() as i32;
    let scale = 10f64.powi(digits as i32 - 1 - magnitude);
    (v * scale).round() / scale
}

impl Histogram {
    /// Counts one value.
    pub fn add(&mut self, v: f64) {
        self.add_n(v, 1);
    }

    fn add_n(&mut self, v: f64, n: u64) {
        let v = self.digits.map_or(v, |d| round(v, d));
        *self.counts.entry(OrderedF64(v)).or_insert(0) += n;
        // At one significant digit there are at most 9 values a decade: bounded still.
        while self.counts.len() > MAX_BINS && self.digits != Some(1) {
            self.round_to(self.digits.map_or(6, |d| d - 1));
        }
    }

    /// Rounds every value counted so far, and every one counted from now on, to
    /// `digits` significant digits.
    fn round_to(&mut self, digits: u32) {
        self.digits = Some(digits);
        let old = std::mem::take(&mut self.counts);
        for (k, c) in old {
            *self
                .counts
                .entry(OrderedF64(round(k.0, digits)))
                .or_insert(0) += c;
        }
    }

    /// Adds every count of `other` (shards of one run merged), at the coarser of the
    /// two roundings.
    pub fn merge(&mut self, other: &Histogram) {
        if let Some(d) = other.digits
            && self.digits.is_none_or(|own| d < own)
        {
            self.round_to(d);
        }
        for (k, c) in &other.counts {
            self.add_n(k.0, *c);
        }
    }

    /// Each distinct (or rounded) value with its count, in increasing order.
    pub fn counts(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        self.counts.iter().map(|(k, c)| (k.0, *c))
    }

    /// The value at quantile `q` (0 to 1) of those counted, at the histogram's rounding:
    /// the smallest value with at least `q` of the counts at or below it.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let want = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (v, c) in self.counts() {
            seen += c;
            if seen >= want {
                return Some(v);
            }
        }
        self.counts.keys().next_back().map(|k| k.0)
    }

    /// Values counted.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Significant digits values were rounded to, if they were.
    pub fn rounded_to(&self) -> Option<u32> {
        self.digits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_read_from_the_counts() {
        let mut h = Histogram::default();
        for v in 1..=10 {
            h.add(f64::from(v));
        }
        assert_eq!(h.quantile(0.5), Some(5.0));
        assert_eq!(h.quantile(0.9), Some(9.0));
        assert_eq!(h.quantile(1.0), Some(10.0));
        assert_eq!(h.quantile(0.0), Some(1.0));
        assert_eq!(Histogram::default().quantile(0.5), None);
    }

    #[test]
    fn few_distinct_values_are_counted_exactly() {
        let mut h = Histogram::default();
        for v in [0.0, 1.0, 1.0, 2.0, 0.0, 0.0] {
            h.add(v);
        }
        let counts: Vec<_> = h.counts().collect();
        assert_eq!(counts, vec![(0.0, 3), (1.0, 2), (2.0, 1)]);
        assert_eq!(h.rounded_to(), None);
    }

    #[test]
    fn a_million_distinct_values_stay_within_the_bins() {
        let mut h = Histogram::default();
        for i in 0..1_000_000u64 {
            h.add(i as f64 * 0.001_7);
        }
        assert!(h.counts().count() <= MAX_BINS);
        assert_eq!(h.total(), 1_000_000);
        assert!(h.rounded_to().is_some());
    }

    #[test]
    fn merged_shards_count_what_one_run_would() {
        let (mut a, mut b, mut whole) = (
            Histogram::default(),
            Histogram::default(),
            Histogram::default(),
        );
        for i in 0..100 {
            let v = f64::from(i % 7);
            if i % 2 == 0 {
                a.add(v)
            } else {
                b.add(v)
            }
            whole.add(v);
        }
        a.merge(&b);
        assert_eq!(a, whole);
    }

    #[test]
    fn a_rounded_shard_rounds_the_exact_one_it_merges_into() {
        let mut exact = Histogram::default();
        exact.add(1.234_567);
        let mut rounded = Histogram::default();
        for i in 0..1_000 {
            rounded.add(f64::from(i) * 0.001_7);
        }
        let digits = rounded.rounded_to().unwrap();
        exact.merge(&rounded);
        assert_eq!(exact.rounded_to(), Some(digits));
        assert!(exact.counts().any(|(v, _)| v == round(1.234_567, digits)));
        assert!(exact.counts().all(|(v, _)| v == round(v, digits)));
        assert_eq!(exact.total(), 1_001);
    }

    #[test]
    fn it_survives_json() {
        let mut h = Histogram::default();
        h.add(2.5);
        h.add(-1.0);
        let text = serde_json::to_string(&h).unwrap();
        let back: Histogram = serde_json::from_str(&text).unwrap();
        assert_eq!(back, h);
    }
}
