//! Following a real memcached's tick edges during a confirmation, so that every call lies
//! as far after an edge of the real server's clock as it lay after an edge of the
//! simulated one.
//!
//! memcached's clock is a whole-second counter its timer advances about once a second,
//! each time a little late: predicted from the first edge alone, the edges of a long
//! replay drift by milliseconds, and a call the simulation placed just after an edge can
//! land just before it. So each edge is watched for (the `time` stat, polled every
//! 200 µs) when the first call of its second is due, and the call is timed from it.
//!
//! memcached reads its clock off the monotonic clock's whole seconds, at its timer's
//! firings, which come a little later each second than at the process start. When that
//! lateness carries a firing over a whole monotonic second, the clock jumps by 2: memcached
//! never shows that second, and a call the simulation placed in it sees the next (a firing
//! that comes early across one shows a second twice). So a confirmation starts its
//! servers about a fifth into a monotonic second ([`wait_for_start_window`]): the drift
//! then needs most of a second to get to either end, minutes of replay even on a loaded
//! machine.
//!
//! What a replay cannot steer is recorded, so that a divergence it explains is told from
//! one of the servers: a second the clock skipped all the same (a restarted server starts
//! when its time comes), and a call answered so late that the next edge may have come
//! first (a loaded machine).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::{ConfirmError, TcpClient};
use mcsim::clock::VirtualTime;
use mcsim::protocol::Request;

/// Where in a second of the monotonic clock a server is started: its timer then fires
/// about that far (plus its start-up time) into each second. Far from both ends: the
/// firings come late by a little each second (about 0.3 ms idle, a few ms loaded), and
/// one can come a few ms early or late by its own jitter.
const START_WINDOW: std::ops::Range<Duration> =
    Duration::from_millis(150)..Duration::from_millis(250);

/// Waits, if need be, until 150 to 250 ms into a second of the monotonic clock (the one
/// memcached reads its clock from), so that a memcached started
/// now fires its timer well inside each second, and its clock neither skips a second nor
/// shows one twice until that timer's drift has added up to most of a second: call it
/// before [`MemcachedDaemon::start`](crate::MemcachedDaemon::start) when what runs
/// on the server is timed against its tick edges.
pub fn wait_for_start_window() {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    let into = Duration::from_nanos(u64::try_from(now.tv_nsec).unwrap_or(0));
    if into < START_WINDOW.start {
        std::thread::sleep(START_WINDOW.start - into);
    } else if into >= START_WINDOW.end {
        std::thread::sleep(Duration::from_secs(1).saturating_sub(into) + START_WINDOW.start);
    }
}

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
    /// The edges seen, by `time` value.
    seen: Vec<Edge>,
    /// The last poll that showed the clock short of the value awaited: when it was sent.
    last_short: Instant,
}

/// A real edge as seen: the `time` value it stands for, the instant it was seen, and the
/// instant of the last poll before that still showed an earlier value (the edge came
/// between the two).
#[derive(Debug, Clone, Copy)]
struct Edge {
    value: u64,
    /// The value the server showed: past `value` when it skipped it, short of it when its
    /// clock was late past the wait's deadline.
    shown: u64,
    seen: Instant,
    after: Instant,
}

/// When a call is due, and what the real clock did in its second.
#[derive(Debug, Clone, Copy)]
pub(super) struct Due {
    /// The instant to send it.
    pub at: Instant,
    /// The call's simulated second, as a `time` value of the real server.
    pub second: u64,
    /// The `time` value the real server showed when the call was due, if not `second`:
    /// it skipped that second, or its clock was more than a second and a half late.
    pub shown: Option<u64>,
    /// The earliest the real server's next edge can come: an answer received before it
    /// was given within the call's second.
    pub next_edge: Instant,
}

impl Ticks {
    /// Waits for an edge of the real server at `addr`; the simulated edge at virtual time
    /// `phase - 1 s` is taken to be that one. `None` if the server shows no `time`.
    pub(super) fn align(addr: SocketAddr, phase: Duration) -> Result<Option<Ticks>, ConfirmError> {
        let mut conn = TcpClient::connect(addr)?;
        let mut after = Instant::now();
        let Some(first) = time_stat(&mut conn)? else {
            return Ok(None);
        };
        let started = Instant::now();
        let base = loop {
            let sent = Instant::now();
            let now = time_stat(&mut conn)?.unwrap_or(first);
            if now != first || started.elapsed() > Duration::from_millis(1500) {
                break now;
            }
            after = sent;
            std::thread::sleep(Duration::from_micros(200));
        };
        let seen = Instant::now();
        Ok(Some(Ticks {
            conn,
            phase: phase.min(Duration::from_millis(999)),
            base,
            seen: vec![Edge {
                value: base,
                shown: base,
                seen,
                after,
            }],
            last_short: seen,
        }))
    }

    /// When a call at virtual time `t` is due: as long after the real edge of its second
    /// as it is after the simulated one, waiting for that edge first.
    pub(super) fn due(&mut self, t: VirtualTime) -> Result<Due, ConfirmError> {
        let since = t.since(VirtualTime::ZERO) + Duration::from_secs(1);
        // Seconds of the simulated clock since the aligned edge, and how far into the
        // current one `t` lies.
        let into = since.saturating_sub(self.phase);
        let k = into.as_secs();
        let offset = into - Duration::from_secs(k);
        let value = self.base + k;
        let edge = match self.seen.iter().find(|e| e.value >= value) {
            Some(&e) => e,
            None => self.wait_for(value)?,
        };
        Ok(Due {
            at: edge.seen + offset,
            second: value,
            shown: (edge.shown != value).then_some(edge.shown),
            next_edge: edge.after + Duration::from_secs(1),
        })
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

    /// Polls until the real clock shows `value` (or later); the edge seen. Sleeps until
    /// shortly before the edge is expected (a second after the last one seen per second
    /// to go), and gives up a second and a half after it.
    fn wait_for(&mut self, value: u64) -> Result<Edge, ConfirmError> {
        let last = *self.seen.last().expect("the aligned edge");
        let expected = last.seen + Duration::from_secs(value.saturating_sub(last.value));
        let early = expected
            .checked_sub(Duration::from_millis(30))
            .unwrap_or(expected);
        let now = Instant::now();
        if early > now {
            std::thread::sleep(early - now);
        }
        let deadline = expected + Duration::from_millis(1500);
        loop {
            let sent = Instant::now();
            let shown = time_stat(&mut self.conn)?.unwrap_or(value);
            let at = Instant::now();
            if shown >= value || at > deadline {
                // A value past the one awaited means the clock jumped over `value` (or
                // this poll came more than a second late); one short of it, that the
                // clock is late. Either way a call due in `value` sees `shown`. A late
                // clock's edge stands for `value`, so later calls of that second do not
                // wait for it again.
                let edge = Edge {
                    value: shown.max(value),
                    shown,
                    seen: at,
                    after: self.last_short,
                };
                self.seen.push(edge);
                return Ok(edge);
            }
            self.last_short = sent;
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};

    /// A server that answers `stats` with only `time`, read off `clock` from its start.
    fn scripted(clock: fn(Duration) -> u64) -> SocketAddr {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let start = Instant::now();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { return };
                std::thread::spawn(move || {
                    let mut out = conn.try_clone().unwrap();
                    for line in BufReader::new(conn).lines() {
                        let Ok(_) = line else { return };
                        let t = clock(start.elapsed());
                        if out
                            .write_all(format!("STAT time {t}\r\nEND\r\n").as_bytes())
                            .is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        addr
    }

    #[test]
    fn a_second_the_clock_skips_is_reported_for_the_calls_placed_in_it() {
        // Edges at 0.2 s (101) and 1.2 s, where the clock jumps from 101 to 103.
        let addr = scripted(|e| match e.as_millis() {
            0..200 => 100,
            200..1200 => 101,
            _ => 103,
        });
        let mut ticks = Ticks::align(addr, Duration::ZERO).unwrap().unwrap();
        let at = |s: f64| VirtualTime::ZERO + Duration::from_secs_f64(s);
        // Phase 0: the aligned edge (101) is virtual time -1 s, so [0, 1) is 102.
        let skipped = ticks.due(at(0.25)).unwrap();
        assert_eq!((skipped.second, skipped.shown), (102, Some(103)));
        let next = ticks.due(at(1.25)).unwrap();
        assert_eq!((next.second, next.shown), (103, None));
        assert!(
            off_second_note(&skipped).contains("a value it skipped"),
            "{}",
            off_second_note(&skipped)
        );
    }

    #[test]
    fn a_clock_late_past_the_deadline_is_reported_and_waited_for_once() {
        // An edge at 0.2 s (101), then the clock stops.
        let addr = scripted(|e| if e.as_millis() < 200 { 100 } else { 101 });
        let mut ticks = Ticks::align(addr, Duration::ZERO).unwrap().unwrap();
        let at = |s: f64| VirtualTime::ZERO + Duration::from_secs_f64(s);
        let late = ticks.due(at(0.25)).unwrap();
        assert_eq!((late.second, late.shown), (102, Some(101)));
        // The next call of that second does not wait a second and a half again.
        let started = Instant::now();
        let again = ticks.due(at(0.5)).unwrap();
        assert!(started.elapsed() < Duration::from_millis(100));
        assert_eq!((again.second, again.shown), (102, Some(101)));
    }

    #[test]
    fn an_answer_after_the_next_edge_could_have_come_is_reported() {
        let now = Instant::now();
        let due = Due {
            at: now,
            second: 7,
            shown: None,
            next_edge: now + Duration::from_millis(900),
        };
        let at = |ms| now + Duration::from_millis(ms);
        assert_eq!(crate::confirm::off_second(3, &due, at(899)), None);
        let late = crate::confirm::off_second(3, &due, at(905)).unwrap();
        assert!(late.contains("5.0 ms after"), "{late}");
        // A clock that never reached the call's second is named too.
        let behind = Due {
            shown: Some(6),
            ..due
        };
        let behind = crate::confirm::off_second(3, &behind, at(1)).unwrap();
        assert!(behind.contains("it still read 6"), "{behind}");
    }

    #[test]
    fn a_memcached_started_in_the_window_ticks_inside_each_second() {
        // memcached's timer fires at its start's place in the monotonic second, and its
        // clock skips (or repeats) a second when that place drifts over a whole one:
        // started in the window, its edges come well inside the second.
        wait_for_start_window();
        let Some(daemon) = crate::MemcachedDaemon::start_for_test("tick edge", &[]) else {
            return;
        };
        let mut ticks = Ticks::align(daemon.addr(), Duration::ZERO)
            .unwrap()
            .unwrap();
        let edge = ticks.due(VirtualTime::ZERO).unwrap();
        // Where in a monotonic second the edge was seen (it came at most one poll
        // before).
        let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        let since_edge = Instant::now().saturating_duration_since(edge.at);
        let edge_into = (now.tv_nsec as f64 / 1e9 - since_edge.as_secs_f64()).rem_euclid(1.0);
        assert!(
            (0.1..0.5).contains(&edge_into),
            "the edge came {edge_into:.3} s into a monotonic second"
        );
    }

    fn off_second_note(due: &Due) -> String {
        crate::confirm::off_second(1, due, due.at).unwrap_or_default()
    }
}
