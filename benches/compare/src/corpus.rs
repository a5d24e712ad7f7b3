//! The bug corpus: recipe bugs written twice, once as mcsim scenario files
//! (`scenarios/<name>.toml`) and once as a shuttle user writes the same test: threads,
//! the mock memcached of [`ShuttleServer`] with a logical clock, faults drawn by random
//! choices in the mock, and the invariant checked by the test itself.
//!
//! Each shuttle model takes the flag it raises on a violation instead of panicking, so a
//! run can stop at the first violation without shuttle's panic and schedule printing
//! (which would only slow shuttle down).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcsim::VirtualTime;
use mcsim::memcache::{Key, McError, Memcache};
use mcsim_models::array2::{Array2, Array2Variant};
use mcsim_models::counter::{Counter, CounterVariant};
use mcsim_models::lock::{Lock, LockVariant};
use mcsim_models::visitor::{VisitorCounter, VisitorVariant};
use shuttle::future::block_on;
use shuttle::rand::{Rng, thread_rng};

use crate::{Clock, MockFaults, ShuttleServer, TICK};

/// The flag a shuttle model raises when its invariant fails.
pub type Found = Arc<AtomicBool>;

/// A test as shuttle runs it.
pub type ShuttleTest = Box<dyn Fn() + Send + Sync + 'static>;

/// One bug of the corpus.
pub struct Bug {
    /// The scenario file mcsim runs (`scenarios/<scenario>.toml`).
    pub scenario: &'static str,
    /// What makes it appear.
    pub needs: &'static str,
    /// The shuttle port, raising the flag on a violation.
    pub shuttle: fn(Found) -> ShuttleTest,
    /// The same port with the recipe fixed (or the fault removed): it must never raise
    /// the flag, which shows the port judges as mcsim's invariant does.
    pub shuttle_fixed: fn(Found) -> ShuttleTest,
    /// For a rare bug: the port and its fixed twin with the fault at an ordinary rate (or
    /// the traffic that makes the bug likelier), which the corpus's test runs instead (the
    /// rare port needs thousands of executions, too many for a test).
    pub tested_at: Option<Ports>,
}

/// A port and its fixed twin.
pub struct Ports {
    /// Raises the flag within a few thousand executions.
    pub buggy: fn(Found) -> ShuttleTest,
    /// Never raises it.
    pub fixed: fn(Found) -> ShuttleTest,
}

/// The corpus, in the order the report lists it.
pub const BUGS: &[Bug] = &[
    Bug {
        scenario: "counter-get-set",
        needs: "interleaving",
        shuttle: |f| counter(CounterVariant::GetSet, 3, 1, 0, MockFaults::default(), f),
        shuttle_fixed: |f| counter(CounterVariant::IncrAdd, 3, 1, 0, MockFaults::default(), f),
        tested_at: None,
    },
    Bug {
        scenario: "lock-get-set",
        needs: "interleaving",
        shuttle: |f| {
            lock(
                LockVariant::GetSet,
                2,
                LockTimes::GET_SET,
                MockFaults::default(),
                f,
            )
        },
        shuttle_fixed: |f| {
            lock(
                LockVariant::Add,
                2,
                LockTimes::GET_SET,
                MockFaults::default(),
                f,
            )
        },
        tested_at: None,
    },
    Bug {
        scenario: "lock-add-holder-pause",
        needs: "timing: a 5 s pause past the 2 s TTL",
        shuttle: |f| lock(LockVariant::Add, 3, LockTimes::PAUSE, pause(5000, 0.1), f),
        shuttle_fixed: |f| lock(LockVariant::Add, 3, LockTimes::PAUSE, pause(1000, 0.1), f),
        tested_at: None,
    },
    Bug {
        scenario: "counter-incr-add-reply-lost",
        needs: "fault: a lost reply, retried",
        shuttle: |f| counter(CounterVariant::IncrAdd, 3, 3, 3, reply_lost(0.05), f),
        shuttle_fixed: |f| counter(CounterVariant::IncrAdd, 3, 3, 0, reply_lost(0.05), f),
        tested_at: None,
    },
    Bug {
        scenario: "counter-incr-add-evict",
        needs: "fault: the counter evicted",
        shuttle: |f| {
            counter(
                CounterVariant::IncrAdd,
                3,
                3,
                0,
                evict(counter_key(), 0.05),
                f,
            )
        },
        shuttle_fixed: |f| counter(CounterVariant::IncrAdd, 3, 3, 0, MockFaults::default(), f),
        tested_at: None,
    },
    Bug {
        scenario: "visitor-as-written",
        needs: "TTL alignment",
        shuttle: |f| visitor(VisitorVariant::AsWritten, 0.5, TICK, f),
        shuttle_fixed: |f| visitor(VisitorVariant::WindowKey, 0.5, TICK, f),
        tested_at: None,
    },
    Bug {
        scenario: "array2-as-written",
        needs: "as written: a failed append returns",
        shuttle: |f| array2(Array2Variant::AsWritten, f),
        shuttle_fixed: |f| array2(Array2Variant::Fixed, f),
        tested_at: None,
    },
];

/// The rate of a rare fault: one opportunity in 100,000 (a pause, a lost reply).
const RARE: f64 = 1e-5;

/// Bugs only a search finds in reasonable time: `random`, at the plan's rates, needs more
/// than 10,000 executions for each (median over seeds). A fault at a production rate
/// that must land where it bites, or a call that must cross a tick edge in its flight.
pub const HARD_BUGS: &[Bug] = &[
    Bug {
        scenario: "lock-add-holder-pause-rare",
        needs: "a 5 s pause, 1 in 100,000 calls, on the holder",
        shuttle: |f| lock(LockVariant::Add, 3, LockTimes::PAUSE, pause(5000, RARE), f),
        shuttle_fixed: |f| lock(LockVariant::Add, 3, LockTimes::PAUSE, pause(1000, RARE), f),
        tested_at: Some(Ports {
            buggy: |f| lock(LockVariant::Add, 3, LockTimes::PAUSE, pause(5000, 0.1), f),
            fixed: |f| lock(LockVariant::Add, 3, LockTimes::PAUSE, pause(1000, 0.1), f),
        }),
    },
    Bug {
        scenario: "lock-add-evict-rare",
        needs: "the held lock evicted, 1 in 500,000 calls",
        shuttle: |f| {
            lock(
                LockVariant::Add,
                3,
                LockTimes::EVICT,
                evict(lock_key(), 2e-6),
                f,
            )
        },
        shuttle_fixed: |f| {
            lock(
                LockVariant::Add,
                3,
                LockTimes::EVICT,
                MockFaults::default(),
                f,
            )
        },
        tested_at: Some(Ports {
            buggy: |f| {
                lock(
                    LockVariant::Add,
                    3,
                    LockTimes::EVICT,
                    evict(lock_key(), 0.05),
                    f,
                )
            },
            fixed: |f| {
                lock(
                    LockVariant::Add,
                    3,
                    LockTimes::EVICT,
                    MockFaults::default(),
                    f,
                )
            },
        }),
    },
    Bug {
        scenario: "counter-incr-add-reply-lost-rare",
        needs: "a lost reply, 1 in 100,000 calls, retried",
        shuttle: |f| counter(CounterVariant::IncrAdd, 3, 3, 3, reply_lost(RARE), f),
        shuttle_fixed: |f| counter(CounterVariant::IncrAdd, 3, 3, 0, reply_lost(RARE), f),
        tested_at: Some(Ports {
            buggy: |f| counter(CounterVariant::IncrAdd, 3, 3, 3, reply_lost(0.05), f),
            fixed: |f| counter(CounterVariant::IncrAdd, 3, 3, 0, reply_lost(0.05), f),
        }),
    },
    Bug {
        scenario: "counter-incr-add-evict-rare",
        needs: "the counter evicted, 1 in 250,000 calls",
        shuttle: |f| {
            counter(
                CounterVariant::IncrAdd,
                3,
                3,
                0,
                evict(counter_key(), 4e-6),
                f,
            )
        },
        shuttle_fixed: |f| counter(CounterVariant::IncrAdd, 3, 3, 0, MockFaults::default(), f),
        tested_at: Some(Ports {
            buggy: |f| {
                counter(
                    CounterVariant::IncrAdd,
                    3,
                    3,
                    0,
                    evict(counter_key(), 0.05),
                    f,
                )
            },
            fixed: |f| counter(CounterVariant::IncrAdd, 3, 3, 0, MockFaults::default(), f),
        }),
    },
    Bug {
        scenario: "slow/visitor-aligned-edge-rare",
        needs: "an add crossing a tick edge in flight",
        shuttle: |f| visitor(VisitorVariant::Aligned, VISITOR_EDGE_RATE, TICK, f),
        shuttle_fixed: |f| visitor(VisitorVariant::WindowKey, VISITOR_EDGE_RATE, TICK, f),
        // Calls of 50 ms: an add crosses a second in one execution in a few.
        tested_at: Some(Ports {
            buggy: |f| visitor(VisitorVariant::Aligned, VISITOR_EDGE_RATE, SLOW_CALL, f),
            fixed: |f| visitor(VisitorVariant::WindowKey, VISITOR_EDGE_RATE, SLOW_CALL, f),
        }),
    },
];

/// Visits a second in the tick-edge bug (`slow/visitor-aligned-edge-rare`).
const VISITOR_EDGE_RATE: f64 = 4.0;

/// A call's time in the test of the tick-edge port.
const SLOW_CALL: Duration = Duration::from_millis(50);

/// A pause of `ms` with probability `p` at each opportunity, at most one.
fn pause(ms: u64, p: f64) -> MockFaults {
    MockFaults {
        pause: Some((1, p)),
        pause_for: Duration::from_millis(ms),
        ..MockFaults::default()
    }
}

/// A lost reply with probability `p` at each call, at most one.
fn reply_lost(p: f64) -> MockFaults {
    MockFaults {
        reply_lost: Some((1, p)),
        ..MockFaults::default()
    }
}

/// An eviction of `key` with probability `p` at each call on it, at most one.
fn evict(key: Key, p: f64) -> MockFaults {
    MockFaults {
        evict: Some((1, p)),
        evict_key: Some(key),
        ..MockFaults::default()
    }
}

fn counter_key() -> Key {
    Counter::new("views", CounterVariant::IncrAdd, Rc::default())
        .key()
        .clone()
}

fn lock_key() -> Key {
    Lock::new("x", 1, LockVariant::Add, 0).key().clone()
}

/// `clients` threads each increment `increments` times, retrying an increment whose
/// reply was lost up to `retries` times; afterwards the counter must hold at least the
/// increments that completed (fewer: lost) and at most those plus the ones given up
/// with their outcome unknown (more: counted twice).
fn counter(
    variant: CounterVariant,
    clients: usize,
    increments: u32,
    retries: u32,
    faults: MockFaults,
    found: Found,
) -> ShuttleTest {
    Box::new(move || {
        let server = ShuttleServer::with_faults(faults.clone());
        let completed = Arc::new(AtomicU64::new(0));
        let unknown = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..clients)
            .map(|_| {
                let (mc, completed) = (server.client(), completed.clone());
                let unknown = unknown.clone();
                shuttle::thread::spawn(move || {
                    block_on(async move {
                        let counter = Counter::new("views", variant, Rc::new(Cell::new(0)));
                        for _ in 0..increments {
                            let mut attempt = 0;
                            loop {
                                match counter.increment(&mc, 1).await {
                                    Ok(()) => {
                                        completed.fetch_add(1, Ordering::Relaxed);
                                        break;
                                    }
                                    Err(McError::Transport(_)) if attempt < retries => attempt += 1,
                                    Err(McError::Transport(_)) => {
                                        unknown.fetch_add(1, Ordering::Relaxed);
                                        break;
                                    }
                                    Err(e) => panic!("increment: {e}"),
                                }
                            }
                        }
                    })
                })
            })
            .collect();
        for t in threads {
            t.join().expect("client thread");
        }
        let key = Counter::new("views", variant, Rc::default()).key().clone();
        let value = server.peek_u64(&key).unwrap_or(0);
        let completed = completed.load(Ordering::Relaxed);
        if value < completed || value > completed + unknown.load(Ordering::Relaxed) {
            found.store(true, Ordering::Relaxed);
        }
    })
}

/// The lock workload's times, as in its scenario files.
#[derive(Clone, Copy)]
struct LockTimes {
    timeout_s: u32,
    hold: Duration,
    backoff: Duration,
    rounds: u32,
}

impl LockTimes {
    const GET_SET: LockTimes = LockTimes {
        timeout_s: 10,
        hold: Duration::from_millis(5),
        backoff: Duration::from_millis(1),
        rounds: 2,
    };
    const PAUSE: LockTimes = LockTimes {
        timeout_s: 2,
        hold: Duration::from_millis(50),
        backoff: Duration::from_millis(20),
        rounds: 1,
    };
    const EVICT: LockTimes = LockTimes {
        timeout_s: 10,
        hold: Duration::from_millis(20),
        backoff: Duration::from_millis(5),
        rounds: 2,
    };
}

/// `clients` threads take the lock `rounds` times each, retrying after `backoff`, and
/// hold it for `hold`; two inside at once is the violation.
fn lock(
    variant: LockVariant,
    clients: usize,
    t: LockTimes,
    faults: MockFaults,
    found: Found,
) -> ShuttleTest {
    // A pause is a bug of time: with a shared clock, a pause of any client would end
    // the holder's TTL.
    let clock = if faults.pause.is_some() {
        Clock::Ordered
    } else {
        Clock::Shared
    };
    Box::new(move || {
        let server = ShuttleServer::with_clock(faults.clone(), clock);
        let inside = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..clients)
            .map(|c| {
                let (mc, inside, found) = (server.client(), inside.clone(), found.clone());
                shuttle::thread::spawn(move || {
                    block_on(async move {
                        let lock = Lock::new("x", t.timeout_s, variant, c);
                        for _ in 0..t.rounds {
                            loop {
                                match lock.try_lock(&mc).await {
                                    Ok(true) => break,
                                    Ok(false) => mc_sleep(&mc, t.backoff).await,
                                    Err(e) => panic!("lock: {e}"),
                                }
                            }
                            if inside.fetch_add(1, Ordering::Relaxed) > 0 {
                                found.store(true, Ordering::Relaxed);
                            }
                            mc_sleep(&mc, t.hold).await;
                            inside.fetch_sub(1, Ordering::Relaxed);
                            lock.unlock(&mc).await.expect("unlock");
                        }
                    })
                })
            })
            .collect();
        for th in threads {
            th.join().expect("client thread");
        }
    })
}

async fn mc_sleep(mc: &impl Memcache, d: Duration) {
    mc.sleep(d).await
}

/// The visitor counter with period 4 s over 5 periods, as its scenario files run it:
/// three frontends each show the counter once, then visit at random times (`rate` visits
/// a second in all), each call taking `call`; one page reads the counter 8 times a period,
/// evenly spread; each
/// read must show exactly the visits of the period before. Time is ordered
/// ([`Clock::Ordered`]): every visit scheduled before a read is done when it is made.
fn visitor(variant: VisitorVariant, rate: f64, call: Duration, found: Found) -> ShuttleTest {
    const VISITORS: usize = 3;
    const PERIOD_S: u64 = 4;
    const FIRST: u64 = 1;
    const WINDOWS: u64 = 5;
    const READS: u64 = 8;
    Box::new(move || {
        let server =
            ShuttleServer::with_clock(MockFaults::default(), Clock::Ordered).with_call_time(call);
        let period = |w: u64| VirtualTime::from_secs(w * PERIOD_S);
        let counts: Arc<Mutex<BTreeMap<u64, u64>>> = Arc::default();
        let mut threads: Vec<_> = (0..VISITORS)
            .map(|_| {
                let (mc, counts) = (server.client(), counts.clone());
                shuttle::thread::spawn(move || {
                    let rate = rate / VISITORS as f64;
                    let mut times = Vec::new();
                    let mut t = period(FIRST).micros() as f64;
                    loop {
                        let u: f64 = thread_rng().gen_range(f64::EPSILON..1.0);
                        t += -u.ln() / rate * 1e6;
                        if t >= period(FIRST + WINDOWS).micros() as f64 {
                            break;
                        }
                        times.push(VirtualTime(t as u64));
                    }
                    block_on(async move {
                        let counter = VisitorCounter::new("visitors", PERIOD_S as u32, variant);
                        // A frontend's first page view shows the counter.
                        counter.value(&mc).await.expect("first view");
                        for at in times {
                            if at > mc.now() {
                                mc_sleep(&mc, at.since(mc.now())).await;
                            }
                            // Nothing yields between this reading and the recipe's.
                            let window = mc.now().secs() / PERIOD_S;
                            counter.increment(&mc).await.expect("visit");
                            *counts.lock().unwrap().entry(window).or_default() += 1;
                        }
                    })
                })
            })
            .collect();
        let (mc, found) = (server.client(), found.clone());
        threads.push(shuttle::thread::spawn(move || {
            block_on(async move {
                let counter = VisitorCounter::new("visitors", PERIOD_S as u32, variant);
                for w in FIRST + 1..=FIRST + WINDOWS {
                    for k in 0..READS {
                        let at = period(w)
                            + Duration::from_secs(PERIOD_S) * (2 * k as u32 + 1)
                                / (2 * READS as u32);
                        if at > mc.now() {
                            mc_sleep(&mc, at.since(mc.now())).await;
                        }
                        let before = mc.now().secs() / PERIOD_S;
                        let value = counter.value(&mc).await.expect("read");
                        if before != w || mc.now().secs() / PERIOD_S != w {
                            continue;
                        }
                        let expected = counts.lock().unwrap().get(&(w - 1)).copied();
                        if value != expected.unwrap_or(0) {
                            found.store(true, Ordering::Relaxed);
                        }
                    }
                }
            })
        }));
        for th in threads {
            th.join().expect("client thread");
        }
    })
}

/// Three threads append three elements each; every element whose append returned must
/// be in the array afterwards.
fn array2(variant: Array2Variant, found: Found) -> ShuttleTest {
    Box::new(move || {
        let server = ShuttleServer::new();
        let completed: Arc<Mutex<Vec<u64>>> = Arc::default();
        let threads: Vec<_> = (0..3u64)
            .map(|c| {
                let (mc, completed) = (server.client(), completed.clone());
                shuttle::thread::spawn(move || {
                    block_on(async move {
                        let array = Array2::new("log", variant);
                        for i in 0..3 {
                            let e = c * 1_000_000 + i;
                            array.add(&mc, e).await.expect("append");
                            completed.lock().unwrap().push(e);
                        }
                    })
                })
            })
            .collect();
        for th in threads {
            th.join().expect("client thread");
        }
        let seen = block_on(Array2::new("log", variant).fetch(&server.client())).expect("fetch");
        if completed.lock().unwrap().iter().any(|e| !seen.contains(e)) {
            found.store(true, Ordering::Relaxed);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use shuttle::scheduler::RandomScheduler;
    use shuttle::{Config, Runner};

    fn violations(test: fn(Found) -> ShuttleTest, executions: usize) -> usize {
        let found = Found::default();
        let hits = Arc::new(AtomicUsize::new(0));
        let (f, h) = (found.clone(), hits.clone());
        let test = test(found);
        Runner::new(
            RandomScheduler::new_from_seed(7, executions),
            Config::default(),
        )
        .run(move || {
            f.store(false, Ordering::Relaxed);
            test();
            if f.load(Ordering::Relaxed) {
                h.fetch_add(1, Ordering::Relaxed);
            }
        });
        hits.load(Ordering::Relaxed)
    }

    #[test]
    fn every_shuttle_port_finds_its_bug_and_passes_when_fixed() {
        for bug in BUGS.iter().chain(HARD_BUGS) {
            let (buggy, fixed) = match &bug.tested_at {
                Some(p) => (p.buggy, p.fixed),
                None => (bug.shuttle, bug.shuttle_fixed),
            };
            assert!(violations(buggy, 2000) > 0, "{}: never found", bug.scenario);
            assert_eq!(
                violations(fixed, 500),
                0,
                "{}: fixed port fails",
                bug.scenario
            );
        }
    }
}
