//! Virtual time: the global clock of a run, clients' skewed views of it, and the
//! whole-second clock a memcached server keeps.
//!
//! Nothing here reads the wall clock.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// Microseconds per second.
const MICROS: u64 = 1_000_000;

/// A point in virtual time: microseconds since the run started.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct VirtualTime(pub u64);

impl VirtualTime {
    /// The start of a run.
    pub const ZERO: VirtualTime = VirtualTime(0);

    /// `secs` seconds after the start.
    pub fn from_secs(secs: u64) -> VirtualTime {
        VirtualTime(secs * MICROS)
    }

    /// `ms` milliseconds after the start.
    pub fn from_millis(ms: u64) -> VirtualTime {
        VirtualTime(ms * 1000)
    }

    /// Microseconds since the start.
    pub fn micros(self) -> u64 {
        self.0
    }

    /// Whole seconds since the start.
    pub fn secs(self) -> u64 {
        self.0 / MICROS
    }

    /// Milliseconds since the start.
    pub fn millis(self) -> u64 {
        self.0 / 1000
    }

    /// Shifted by a signed skew, clamped at zero.
    pub fn skewed(self, skew: Skew) -> VirtualTime {
        VirtualTime(self.0.saturating_add_signed(skew.0))
    }

    /// Time elapsed since `earlier` (zero if `earlier` is later).
    pub fn since(self, earlier: VirtualTime) -> Duration {
        Duration::from_micros(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for VirtualTime {
    type Output = VirtualTime;
    fn add(self, d: Duration) -> VirtualTime {
        VirtualTime(self.0.saturating_add(d.as_micros() as u64))
    }
}

impl AddAssign<Duration> for VirtualTime {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub for VirtualTime {
    type Output = Duration;
    fn sub(self, rhs: VirtualTime) -> Duration {
        self.since(rhs)
    }
}

impl fmt::Display for VirtualTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06}", self.0 / MICROS, self.0 % MICROS)
    }
}

impl fmt::Debug for VirtualTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={self}")
    }
}

/// How far a client's clock is off the global one, in microseconds (negative: behind).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct Skew(pub i64);

impl Skew {
    /// A skew of `ms` milliseconds.
    pub fn millis(ms: i64) -> Skew {
        Skew(ms * 1000)
    }
}

/// The tick memcached's clock shows right after the process starts.
pub const FIRST_TICK: u32 = 62;

/// A memcached server's whole-second clock (`current_time`).
///
/// memcached starts its clock at 62 and advances it once a second from a timer, so its
/// ticks are offset from the run's whole seconds by an arbitrary phase. Here:
/// `tick = 62 + skipped + floor((now - boot - phase) / 1 s)`. A restart boots a new
/// process: the clock starts again at 62.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ServerClock {
    /// When the process started.
    boot: VirtualTime,
    /// Offset of the tick edges after `boot`, below one second.
    phase: Duration,
    /// Seconds the clock jumped ahead (the `skip a second` fault).
    skipped: u32,
    /// The unix time of virtual time zero, for absolute exptimes.
    unix_at_zero: i64,
}

impl ServerClock {
    /// A clock booted at `boot` whose ticks fall `phase` (mod 1 s) after it.
    pub fn new(boot: VirtualTime, phase: Duration, unix_at_zero: i64) -> ServerClock {
        let phase = Duration::from_micros(phase.as_micros() as u64 % MICROS);
        ServerClock {
            boot,
            phase,
            skipped: 0,
            unix_at_zero,
        }
    }

    /// The tick at virtual time `now`.
    pub fn tick(&self, now: VirtualTime) -> u32 {
        let start = self.boot + self.phase;
        let elapsed = now.0.saturating_sub(start.0) / MICROS;
        FIRST_TICK
            .saturating_add(self.skipped)
            .saturating_add(elapsed as u32)
    }

    /// The virtual time at which the clock shows `tick` for the first time.
    pub fn time_of_tick(&self, tick: u32) -> VirtualTime {
        let n = u64::from(tick.saturating_sub(FIRST_TICK).saturating_sub(self.skipped));
        VirtualTime((self.boot + self.phase).0 + n * MICROS)
    }

    /// The clock jumps one second ahead, as memcached's timer occasionally does.
    pub fn skip_second(&mut self) {
        self.skipped += 1;
    }

    /// memcached's `process_started`: the unix time its tick 0 corresponds to.
    pub fn process_started(&self) -> i64 {
        self.unix_at_zero + (self.boot.0 / MICROS) as i64 - i64::from(FIRST_TICK)
    }

    /// The unix time at virtual time `now`.
    pub fn unix_time(&self, now: VirtualTime) -> i64 {
        self.unix_at_zero + (now.0 / MICROS) as i64
    }

    /// When the process started.
    pub fn boot(&self) -> VirtualTime {
        self.boot
    }

    /// The phase of its ticks.
    pub fn phase(&self) -> Duration {
        self.phase
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_start_at_62_and_follow_the_phase() {
        let c = ServerClock::new(VirtualTime::ZERO, Duration::from_millis(300), 1_700_000_000);
        assert_eq!(c.tick(VirtualTime::ZERO), 62);
        assert_eq!(c.tick(VirtualTime::from_millis(1299)), 62);
        assert_eq!(c.tick(VirtualTime::from_millis(1300)), 63);
        assert_eq!(c.time_of_tick(63), VirtualTime::from_millis(1300));
    }

    #[test]
    fn skew_is_signed() {
        let t = VirtualTime::from_secs(10);
        assert_eq!(t.skewed(Skew::millis(-500)), VirtualTime::from_millis(9500));
        assert_eq!(
            VirtualTime::ZERO.skewed(Skew::millis(-1)),
            VirtualTime::ZERO
        );
    }
}
