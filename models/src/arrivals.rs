//! Deterministic arrival patterns for the time-based families (visitor counter, online
//! counter, event log): when each client's visits, hits or events happen, in true virtual
//! time.
//!
//! No RNG: every "random" choice is a hash of (seed, client, index), so a schedule is a pure
//! function of the parameters and a per-client salt. The harnesses salt it with the time at
//! which the client's first call executed (which the exploration strategy chose), so
//! executions differ from each other while a replayed schedule string still reproduces its
//! execution exactly.

use std::time::Duration;

use mcsim::VirtualTime;
use mcsim::prelude::*;

/// One step of splitmix64: a good 64-bit mixer.
pub fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A hash of three numbers.
pub fn hash3(a: u64, b: u64, c: u64) -> u64 {
    splitmix(splitmix(splitmix(a) ^ b) ^ c)
}

/// A number in (0, 1) from a hash.
pub fn unit(h: u64) -> f64 {
    ((h >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

/// The shape of the traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Independent arrivals (exponential gaps) at the mean rate.
    Poisson,
    /// Evenly spaced arrivals, clients interleaved.
    Uniform,
    /// Bursts of `burst_size` arrivals shared by all clients, spread over `burst_spread`;
    /// bursts come every `burst_every` (or, when that is zero, at exponential gaps).
    Bursty,
    /// Arrivals just before whole seconds (`edge_offset` before them), each client at a
    /// second with probability `rate / clients`: probes races across the server's ticks.
    Edge,
}

impl Pattern {
    /// Parses a pattern name.
    pub fn parse(name: &str) -> Option<Pattern> {
        Some(match name {
            "poisson" => Pattern::Poisson,
            "uniform" => Pattern::Uniform,
            "bursty" => Pattern::Bursty,
            "edge" => Pattern::Edge,
            _ => return None,
        })
    }
}

/// The parameters of a traffic pattern, as the time-based families read them from their
/// `[params]` table (`#[serde(flatten)]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrafficParams {
    /// The shape (`poisson`, `uniform`, `bursty`, `edge`).
    pub pattern: Pattern,
    /// Mean arrivals per second, all clients together (default: the family's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    /// Bursty: arrivals per burst.
    pub burst_size: Count,
    /// Bursty: a burst's arrivals fall within this long after its start.
    pub burst_spread_ms: Millis,
    /// Bursty: fixed time between bursts (0: exponential gaps).
    pub burst_every_ms: Millis,
    /// Bursty with a fixed period: when the first burst comes.
    pub burst_offset_ms: Millis,
    /// Edge: how long before a whole second the arrivals come, in microseconds.
    pub edge_offset_us: u64,
    /// Seed of every hash.
    pub seed: u64,
    /// Salt each client's schedule with the execution's own timing.
    pub vary: bool,
}

impl Default for TrafficParams {
    fn default() -> TrafficParams {
        TrafficParams {
            pattern: Pattern::Poisson,
            rate_per_s: None,
            burst_size: Count(5),
            burst_spread_ms: Millis(2),
            burst_every_ms: Millis(0),
            burst_offset_ms: Millis(0),
            edge_offset_us: 200,
            seed: 0,
            vary: true,
        }
    }
}

impl TrafficParams {
    /// The traffic, with `default_rate` when the file gives no `rate_per_s`; a rate that
    /// is not positive (or over 10,000 a second) or an edge offset over an hour is an
    /// error naming its field.
    pub fn traffic(&self, default_rate: f64) -> Result<Traffic, FieldError> {
        let rate_per_s = self.rate_per_s.unwrap_or(default_rate);
        if !(rate_per_s > 0.0 && rate_per_s <= 10_000.0) {
            return Err(FieldError::new(
                "params.rate_per_s",
                None,
                format!("{rate_per_s} is out of range: must be above 0, at most 10000"),
            ));
        }
        if self.edge_offset_us > 3_600_000_000 {
            return Err(FieldError::new(
                "params.edge_offset_us",
                None,
                format!(
                    "{} is out of range: must be 0 to 3600000000",
                    self.edge_offset_us
                ),
            ));
        }
        Ok(Traffic {
            pattern: self.pattern,
            rate_per_s,
            burst_size: self.burst_size.get().max(1),
            burst_spread: self.burst_spread_ms.get(),
            burst_every: self.burst_every_ms.get(),
            burst_offset: self.burst_offset_ms.get(),
            edge_offset: Duration::from_micros(self.edge_offset_us),
            seed: self.seed,
            vary: self.vary,
        })
    }
}

/// A traffic pattern over all clients.
#[derive(Debug, Clone, PartialEq)]
pub struct Traffic {
    /// The shape.
    pub pattern: Pattern,
    /// Mean arrivals per second, all clients together.
    pub rate_per_s: f64,
    /// Bursty: arrivals per burst, all clients together.
    pub burst_size: u32,
    /// Bursty: a burst's arrivals fall within this long after its start.
    pub burst_spread: Duration,
    /// Bursty: fixed time between bursts (zero: exponential gaps at `rate / burst_size`).
    pub burst_every: Duration,
    /// Bursty with a fixed period: when the first burst comes after the start.
    pub burst_offset: Duration,
    /// Edge: how long before a whole second the arrivals come.
    pub edge_offset: Duration,
    /// Seed of every hash.
    pub seed: u64,
    /// Salt each client's schedule with the execution's own timing, so executions differ.
    pub vary: bool,
}

impl Traffic {
    /// The salt of one client's schedule: the seed, and (when `vary`) `entropy`, a number
    /// the execution produced (e.g. the microsecond its first call executed at).
    pub fn salt(&self, client: usize, entropy: u64) -> u64 {
        let e = if self.vary { entropy } else { 0 };
        hash3(self.seed, client as u64, e)
    }

    /// The arrival times of `client` (of `clients`) in `[from, to)`, sorted.
    pub fn times(
        &self,
        client: usize,
        clients: usize,
        salt: u64,
        from: VirtualTime,
        to: VirtualTime,
    ) -> Vec<VirtualTime> {
        let clients = clients.max(1);
        let per_client = self.rate_per_s / clients as f64;
        let mut out = Vec::new();
        match self.pattern {
            Pattern::Poisson => {
                let mut t = from.micros() as f64;
                for i in 0.. {
                    let u = unit(hash3(salt, 0x5050, i));
                    t += -u.ln() / per_client * 1e6;
                    if t >= to.micros() as f64 {
                        break;
                    }
                    out.push(VirtualTime(t as u64));
                }
            }
            Pattern::Uniform => {
                let gap = 1e6 / per_client;
                let mut t = from.micros() as f64 + gap * client as f64 / clients as f64;
                while t < to.micros() as f64 {
                    out.push(VirtualTime(t as u64));
                    t += gap;
                }
            }
            Pattern::Bursty => {
                let size = u64::from(self.burst_size);
                let bursts_per_s = self.rate_per_s / size as f64;
                let spread = self.burst_spread.as_micros() as f64;
                let mut start = from.micros() as f64 + self.burst_offset.as_micros() as f64;
                for k in 0u64.. {
                    if !self.burst_every.is_zero() {
                        if k > 0 {
                            start += self.burst_every.as_micros() as f64;
                        }
                    } else {
                        // Burst times are shared by every client: hashed from the seed only.
                        let u = unit(hash3(self.seed, 0xB0B0, k));
                        start += -u.ln() / bursts_per_s * 1e6;
                    }
                    if start >= to.micros() as f64 {
                        break;
                    }
                    for j in (0..size).filter(|j| *j as usize % clients == client) {
                        let jitter = unit(hash3(salt, k, j)) * spread;
                        let t = start + jitter;
                        if t < to.micros() as f64 {
                            out.push(VirtualTime(t as u64));
                        }
                    }
                }
            }
            Pattern::Edge => {
                let p = per_client.min(1.0);
                let offset = self.edge_offset.as_micros() as u64;
                let first = from.micros().div_ceil(1_000_000);
                for s in first.. {
                    let t = (s * 1_000_000).saturating_sub(offset);
                    if t >= to.micros() {
                        break;
                    }
                    if t >= from.micros() && unit(hash3(salt, 0xED6E, s)) < p {
                        out.push(VirtualTime(t));
                    }
                }
            }
        }
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn traffic(pattern: Pattern, rate: f64) -> Traffic {
        Traffic {
            pattern,
            rate_per_s: rate,
            burst_size: 4,
            burst_spread: Duration::from_millis(2),
            burst_every: Duration::ZERO,
            burst_offset: Duration::ZERO,
            edge_offset: Duration::from_micros(200),
            seed: 7,
            vary: true,
        }
    }

    #[test]
    fn poisson_keeps_the_mean_rate_and_is_deterministic() {
        let t = traffic(Pattern::Poisson, 20.0);
        let (from, to) = (VirtualTime::from_secs(0), VirtualTime::from_secs(100));
        let total: usize = (0..4)
            .map(|c| t.times(c, 4, t.salt(c, 1), from, to).len())
            .sum();
        assert!((1800..2200).contains(&total), "{total}");
        assert_eq!(t.times(1, 4, 9, from, to), t.times(1, 4, 9, from, to));
        assert_ne!(t.times(1, 4, 9, from, to), t.times(1, 4, 10, from, to));
    }

    #[test]
    fn uniform_spaces_arrivals_evenly_and_interleaves_clients() {
        let t = traffic(Pattern::Uniform, 4.0);
        let (from, to) = (VirtualTime::from_secs(0), VirtualTime::from_secs(1));
        let at = |c| -> Vec<u64> {
            t.times(c, 2, 0, from, to)
                .iter()
                .map(|v| v.micros())
                .collect()
        };
        assert_eq!(at(0), [0, 500_000]);
        assert_eq!(at(1), [250_000, 750_000]);
    }

    #[test]
    fn every_pattern_has_its_name_and_the_rate_must_be_positive() {
        for (name, p) in [
            ("poisson", Pattern::Poisson),
            ("uniform", Pattern::Uniform),
            ("bursty", Pattern::Bursty),
            ("edge", Pattern::Edge),
        ] {
            assert_eq!(Pattern::parse(name), Some(p));
        }
        assert_eq!(Pattern::parse("steady"), None);
        let rate = |r: f64| {
            TrafficParams {
                rate_per_s: Some(r),
                ..TrafficParams::default()
            }
            .traffic(1.0)
            .map(|t| t.rate_per_s)
        };
        assert_eq!(rate(2.5), Ok(2.5));
        assert!(rate(0.0).is_err());
    }

    #[test]
    fn an_edge_offset_over_an_hour_is_refused_at_its_field() {
        let offset = |us: u64| {
            TrafficParams {
                edge_offset_us: us,
                ..TrafficParams::default()
            }
            .traffic(1.0)
        };
        assert!(offset(3_600_000_000).is_ok());
        let e = offset(3_600_000_001).unwrap_err();
        assert_eq!(e.field, "params.edge_offset_us");
    }

    #[test]
    fn bursts_come_at_the_rate_divided_by_their_size() {
        // 4 arrivals a second in bursts of 4: about one burst a second.
        let t = traffic(Pattern::Bursty, 4.0);
        let (from, to) = (VirtualTime::from_secs(0), VirtualTime::from_secs(100));
        let n = t.times(0, 1, 1, from, to).len();
        assert!((300..500).contains(&n), "{n}");
    }

    #[test]
    fn bursts_are_shared_by_all_clients() {
        let t = traffic(Pattern::Bursty, 4.0);
        let (from, to) = (VirtualTime::from_secs(0), VirtualTime::from_secs(10));
        let a = t.times(0, 2, t.salt(0, 1), from, to);
        let b = t.times(1, 2, t.salt(1, 2), from, to);
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert!(x.micros().abs_diff(y.micros()) <= 2000);
        }
    }

    #[test]
    fn edge_arrivals_come_just_before_whole_seconds() {
        let t = traffic(Pattern::Edge, 10.0);
        let v = t.times(
            0,
            1,
            3,
            VirtualTime::from_secs(1),
            VirtualTime::from_secs(20),
        );
        assert_eq!(v.len(), 19);
        assert!(v.iter().all(|x| x.micros() % 1_000_000 == 999_800));
    }
}
