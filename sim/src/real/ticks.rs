//! Following a real memcached's tick edges during a confirmation, so that every call lies
//! as far after an edge of the real server's clock as it lay after an edge of the
//! simulated one.
//!
//! memcached's clock is a whole-second counter its timer advances about once a second,
//! each time a little late: predicted from the first edge alone, the edges of a long
//! replay drift by milliseconds, and a call the simulation placed just after an edge can
//! land just before it. So each edge is watched for (the `time` stat, polled every
//! 200 µs) when the first call of its second is due, and the call is timed from it.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::clock::VirtualTime;
use crate::protocol::Request;
use crate::real::{ConfirmError, TcpClient};

/// The `time` stat: memcached's clock, in whole seconds.
fn time_stat(conn: &mut TcpClient) -> Result<Option<u64>, ConfirmError> {
    Ok(conn
        .call(&Request::Stats)?
        .stat("time")
        .and_then(|v| v.parse().ok()))
}

/// The real server's edges as they come, matched to the simulation's.
pub(super) struct Ticks {
    conn: TcpClient,
    /// The simulated servers' tick phase.
    phase: Duration,
    /// The `time` value the real server showed in the simulated second before virtual
    /// time `phase` (the simulated edge at `phase` is the real one to `base + 1`).
    base: u64,
    /// The real instants the edges were seen, by `time` value.
    seen: Vec<(u64, Instant)>,
}

impl Ticks {
    /// Waits for an edge of the real server at `addr`; the simulated edge at virtual time
    /// `phase - 1 s` is taken to be that one. `None` if the server shows no `time`.
    pub(super) fn align(addr: SocketAddr, phase: Duration) -> Result<Option<Ticks>, ConfirmError> {
        let mut conn = TcpClient::connect(addr)?;
        let Some(first) = time_stat(&mut conn)? else {
            return Ok(None);
        };
        let started = Instant::now();
        let base = loop {
            let now = time_stat(&mut conn)?.unwrap_or(first);
            if now != first || started.elapsed() > Duration::from_millis(1500) {
                break now;
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        Ok(Some(Ticks {
            conn,
            phase: phase.min(Duration::from_millis(999)),
            base,
            seen: vec![(base, Instant::now())],
        }))
    }

    /// The real instant a call at virtual time `t` is due: as long after the real edge
    /// of its second as it is after the simulated one, waiting for that edge first.
    pub(super) fn due(&mut self, t: VirtualTime) -> Result<Instant, ConfirmError> {
        let since = t.since(VirtualTime::ZERO) + Duration::from_secs(1);
        // Seconds of the simulated clock since the aligned edge, and how far into the
        // current one `t` lies.
        let into = since.saturating_sub(self.phase);
        let k = into.as_secs();
        let offset = into - Duration::from_secs(k);
        let value = self.base + k;
        let edge = match self.seen.iter().find(|(v, _)| *v >= value) {
            Some(&(_, at)) => at,
            None => self.wait_for(value)?,
        };
        Ok(edge + offset)
    }

    /// What to add to an absolute exptime the simulation sent so that the real server,
    /// whose clock reads real unix time, sees it as many seconds ahead as the simulated
    /// one did: the real `time` in the simulation's first second, less the simulated
    /// one (`unix_at_zero`).
    pub(super) fn unix_shift(&self, unix_at_zero: i64) -> i64 {
        // The simulated second holding virtual time 0 is the real one of `base`, or the
        // next when the phase is 0 (the aligned edge is then virtual time -1 s).
        let first = self.base + u64::from(self.phase.is_zero());
        first as i64 - unix_at_zero
    }

    /// Polls until the real clock shows `value` (or later); when it was first seen. Sleeps
    /// until shortly before the edge is expected (a second after the last one seen per
    /// second to go), and gives up a second and a half after it.
    fn wait_for(&mut self, value: u64) -> Result<Instant, ConfirmError> {
        let &(last_value, last_at) = self.seen.last().expect("the aligned edge");
        let expected = last_at + Duration::from_secs(value.saturating_sub(last_value));
        let early = expected
            .checked_sub(Duration::from_millis(30))
            .unwrap_or(expected);
        let now = Instant::now();
        if early > now {
            std::thread::sleep(early - now);
        }
        let deadline = expected + Duration::from_millis(1500);
        loop {
            let shown = time_stat(&mut self.conn)?.unwrap_or(value);
            let at = Instant::now();
            if shown >= value || at > deadline {
                self.seen.push((shown.max(value), at));
                return Ok(at);
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}
