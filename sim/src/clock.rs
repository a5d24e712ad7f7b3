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

    /// `us` microseconds later (saturating), as `self + Duration::from_micros(us)`
    /// without converting a `Duration`.
    pub(crate) fn plus_micros(self, us: u64) -> VirtualTime {
        VirtualTime(self.0.saturating_add(us))
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
        self.plus_micros(d.as_micros() as u64)
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

impl VirtualTime {
    /// Writes the time as seconds with six decimals (`12.000345`, what `Display` shows)
    /// without the formatter's machinery: a server writes one per command it traces.
    pub fn write_to<W: fmt::Write + ?Sized>(self, out: &mut W) -> fmt::Result {
        let mut buf = [0; 20];
        out.write_str(decimal(self.0 / MICROS, &mut buf))?;
        out.write_char('.')?;
        // The fraction with a leading 1, so that its zeros are written; the 1 is cut.
        let fraction = decimal(self.0 % MICROS + MICROS, &mut buf);
        out.write_str(&fraction[1..])
    }
}

/// `n` in decimal, in `buf`.
fn decimal(n: u64, buf: &mut [u8; 20]) -> &str {
    std::str::from_utf8(crate::decimal::decimal_in(n, buf)).expect("decimal digits are ASCII")
}

impl fmt::Display for VirtualTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_to(f)
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
/// memcached reads its clock when the process starts (tick 62) and then once a second
/// from a timer, so each tick lasts one second and an item stored with a TTL of `E`
/// seconds expires when the tick reaches its store tick plus `E`: it lives more than
/// `E - 1` and at most `E` seconds of real time, whenever in the second it was stored.
///
/// Here the tick edges fall `phase` after each of the run's whole seconds, counted from
/// `boot`: `tick = 62 + skipped + floor((now - boot + lead) / 1 s)` with
/// `lead = (1 s - phase) mod 1 s`, as if the process had started `lead` before `boot`.
/// The first tick therefore lasts `phase` (a whole second at phase 0), never more than a
/// second. A restart boots a new process: the clock starts again at 62.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ServerClock {
    /// When the process started, as far as the run can see.
    boot: VirtualTime,
    /// How long before `boot` its first tick began: `(1 s - phase) mod 1 s`.
    lead: u64,
    /// Seconds the clock jumped ahead (the `skip a second` fault).
    skipped: u32,
    /// The unix time of virtual time zero, for absolute exptimes.
    unix_at_zero: i64,
}

impl ServerClock {
    /// A clock booted at `boot` whose tick edges fall `phase` (mod 1 s) after each whole
    /// second since `boot`.
    pub fn new(boot: VirtualTime, phase: Duration, unix_at_zero: i64) -> ServerClock {
        let phase = phase.as_micros() as u64 % MICROS;
        ServerClock {
            boot,
            lead: (MICROS - phase) % MICROS,
            skipped: 0,
            unix_at_zero,
        }
    }

    /// The tick at virtual time `now` (62 before `boot`).
    pub fn tick(&self, now: VirtualTime) -> u32 {
        let elapsed = match now.0.checked_sub(self.boot.0) {
            Some(since_boot) => (since_boot + self.lead) / MICROS,
            None => 0,
        };
        FIRST_TICK
            .saturating_add(self.skipped)
            .saturating_add(u32::try_from(elapsed).unwrap_or(u32::MAX))
    }

    /// The virtual time at which the clock shows `tick` for the first time (`boot` for
    /// the ticks it shows from the start).
    pub fn time_of_tick(&self, tick: u32) -> VirtualTime {
        let n = u64::from(tick.saturating_sub(FIRST_TICK).saturating_sub(self.skipped));
        if n == 0 {
            return self.boot;
        }
        VirtualTime(self.boot.0 + (n * MICROS).saturating_sub(self.lead))
    }

    /// The clock jumps one second ahead, as memcached's timer occasionally does.
    pub fn skip_second(&mut self) {
        self.skipped += 1;
    }

    /// memcached's `process_started`: the unix second its first clock reading fell in,
    /// minus 62. An absolute exptime `X` therefore expires at the tick edge that follows
    /// unix time `X` by the same fraction of a second as every tick edge follows a unix
    /// second, as on a real server.
    pub fn process_started(&self) -> i64 {
        let started = self.boot.0 as i64 - self.lead as i64;
        self.unix_at_zero + started.div_euclid(MICROS as i64) - i64::from(FIRST_TICK)
    }

    /// The unix time at virtual time `now`.
    pub fn unix_time(&self, now: VirtualTime) -> i64 {
        self.unix_at_zero + (now.0 / MICROS) as i64
    }

    /// When the process started.
    pub fn boot(&self) -> VirtualTime {
        self.boot
    }

    /// The phase of its ticks: how far after each whole second since boot an edge falls.
    pub fn phase(&self) -> Duration {
        Duration::from_micros((MICROS - self.lead) % MICROS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_start_at_62_and_follow_the_phase() {
        let c = ServerClock::new(VirtualTime::ZERO, Duration::from_millis(300), 1_700_000_000);
        assert_eq!(c.tick(VirtualTime::ZERO), 62);
        assert_eq!(c.tick(VirtualTime::from_millis(299)), 62);
        assert_eq!(c.tick(VirtualTime::from_millis(300)), 63);
        assert_eq!(c.tick(VirtualTime::from_millis(1299)), 63);
        assert_eq!(c.tick(VirtualTime::from_millis(1300)), 64);
        assert_eq!(c.time_of_tick(62), VirtualTime::ZERO);
        assert_eq!(c.time_of_tick(63), VirtualTime::from_millis(300));
        assert_eq!(c.time_of_tick(64), VirtualTime::from_millis(1300));
        assert_eq!(c.phase(), Duration::from_millis(300));
    }

    /// Every tick lasts at most a second, so an item stored at any instant with TTL `E`
    /// lives more than `E - 1` and at most `E` seconds, at every phase and boot time.
    #[test]
    fn lifetimes_lie_within_the_ttl_at_every_phase() {
        for phase_ms in (0..1000).step_by(50) {
            for boot_ms in [0, 250, 1000, 2730] {
                let boot = VirtualTime::from_millis(boot_ms);
                let c = ServerClock::new(boot, Duration::from_millis(phase_ms), 1_700_000_000);
                for ttl in [1u32, 2, 5] {
                    for at_ms in (boot_ms..boot_ms + 3000).step_by(37) {
                        let at = VirtualTime::from_millis(at_ms);
                        let dies = c.time_of_tick(c.tick(at) + ttl);
                        let lived = dies.micros() - at.micros();
                        let e = u64::from(ttl) * MICROS;
                        assert!(
                            lived > e - MICROS && lived <= e,
                            "phase {phase_ms} ms, boot {boot_ms} ms, stored at {at_ms} ms, ttl {ttl}: lived {lived} us"
                        );
                        assert_eq!(c.tick(dies), c.tick(at) + ttl);
                        assert_eq!(c.tick(VirtualTime(dies.0 - 1)), c.tick(at) + ttl - 1);
                    }
                }
            }
        }
    }

    /// An absolute exptime expires after its unix second begins, by the clock's phase.
    #[test]
    fn absolute_exptimes_expire_at_the_edge_after_their_unix_second() {
        for phase_ms in [0u64, 300, 999] {
            let c = ServerClock::new(
                VirtualTime::ZERO,
                Duration::from_millis(phase_ms),
                1_700_000_000,
            );
            let x = 1_700_000_005i64;
            let tick = (x - c.process_started()) as u32;
            let at = c.time_of_tick(tick);
            assert_eq!(c.unix_time(at), x, "phase {phase_ms}");
            assert_eq!(at, VirtualTime::from_millis(5000 + phase_ms));
        }
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
