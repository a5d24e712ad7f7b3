//! The visitor-counter workload and its invariant.
//!
//! Visitor clients (frontends, each with its own clock skew) count visits that arrive on a
//! deterministic schedule for a few periods; one extra client with an exact clock shows the
//! counter several times per period. The harness keeps the ground truth: every visit with
//! the true period it happened in and the period its frontend's clock put it in, every key
//! creation with its time and TTL, every read; when a key really died it reads from the
//! server's own clock at the end.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use mcsim::memcache::{Key, McError, Memcache};
use mcsim::{EndView, Failure, ServerClock, Sim, Skew, VirtualTime};

use crate::arrivals::Traffic;
use crate::visitor::recipe::{Counted, VisitorCounter, VisitorVariant};

/// Parameters of the visitor workload.
#[derive(Debug, Clone, PartialEq)]
pub struct VisitorParams {
    /// The recipe.
    pub variant: VisitorVariant,
    /// The period `T`, seconds.
    pub period_s: u32,
    /// Periods with traffic.
    pub windows: u32,
    /// When visits arrive.
    pub traffic: Traffic,
    /// Reads of the counter per period.
    pub reads_per_window: u32,
    /// Clock skew per visitor client.
    pub skews: Vec<Skew>,
}

/// One visit as it really happened.
#[derive(Debug, Clone, Copy, Hash)]
struct Visit {
    /// The period by true time.
    true_window: u64,
    /// The period by the frontend's own clock.
    own_window: u64,
}

/// A shadow key an `add` created.
#[derive(Debug, Clone, Hash)]
struct Creation {
    /// The key.
    key: Key,
    /// The period it collects (by its creator's clock).
    window: u64,
    /// When the `add` executed (true time).
    at: VirtualTime,
    /// Its TTL.
    ttl: u32,
}

/// One `value()` call.
#[derive(Debug, Clone, Copy, Hash)]
struct Read {
    at: VirtualTime,
    value: u64,
}

#[derive(Debug, Default, Hash)]
struct Ghost {
    visits: Vec<Visit>,
    creations: Vec<Creation>,
    reads: Vec<Read>,
    /// Visits whose outcome the frontend could not learn (transport faults).
    unknown: u64,
}

/// The first period with traffic: about three seconds in, so every run starts with the
/// same quiet lead whatever the period.
fn first_window(period_s: u32) -> u64 {
    3u64.div_ceil(u64::from(period_s.max(1)))
}

/// The true time `d` after the start of period `w`.
fn at(period: Duration, w: u64, d: Duration) -> VirtualTime {
    VirtualTime::ZERO + period * (w as u32) + d
}

/// Registers the visitor workload.
pub fn setup(p: &VisitorParams, clients: usize, sim: &mut Sim) {
    let ghost: Rc<RefCell<Ghost>> = Rc::default();
    crate::ghost::watch(sim, &ghost);
    let period = Duration::from_secs(u64::from(p.period_s));
    let w0 = first_window(p.period_s);
    let w_end = w0 + u64::from(p.windows);
    for c in 0..clients {
        let (ghost, p) = (ghost.clone(), p.clone());
        let skew = p.skews.get(c).copied().unwrap_or_default();
        sim.client(skew, move |mc| async move {
            let counter = VisitorCounter::new("visitors", p.period_s, p.variant);
            // A frontend's first page view shows the counter; when it executes seeds this
            // execution's schedule.
            match counter.value(&mc).await {
                Ok(_) | Err(McError::Transport(_)) => {}
                Err(e) => return Err(e),
            }
            let salt = p.traffic.salt(c, mc.global_now().micros());
            let times = p.traffic.times(
                c,
                clients,
                salt,
                at(period, w0, Duration::ZERO),
                at(period, w_end, Duration::ZERO),
            );
            for t in times {
                mc.sleep(t.since(mc.global_now())).await;
                let now = mc.global_now();
                let key = counter.shadow_key(mc.now().secs());
                let visit = Visit {
                    true_window: now.micros() / period.as_micros() as u64,
                    own_window: mc.now().micros() / period.as_micros() as u64,
                };
                match counter.increment(&mc).await {
                    Ok(counted) => {
                        let mut g = ghost.borrow_mut();
                        g.visits.push(visit);
                        if let Counted::Created { ttl } = counted {
                            g.creations.push(Creation {
                                key,
                                window: visit.own_window,
                                at: mc.global_now(),
                                ttl,
                            });
                        }
                    }
                    // The frontend cannot tell whether it counted; it moves on.
                    Err(McError::Transport(_)) => ghost.borrow_mut().unknown += 1,
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        });
    }
    // The page that shows the counter, with an exact clock.
    let (g, p2) = (ghost.clone(), p.clone());
    sim.client(Skew::default(), move |mc| async move {
        let counter = VisitorCounter::new("visitors", p2.period_s, p2.variant);
        let n = p2.reads_per_window.max(1);
        for w in w0 + 1..=w_end {
            for k in 0..n {
                let t = at(period, w, period * (2 * k + 1) / (2 * n));
                mc.sleep(t.since(mc.global_now())).await;
                let now = mc.global_now();
                match counter.value(&mc).await {
                    Ok(value) => g.borrow_mut().reads.push(Read { at: now, value }),
                    Err(McError::Transport(_)) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    });
    let variant = p.variant;
    sim.at_end("visitor.window_exact", move |view| {
        check(&ghost.borrow(), variant, period, w0, w_end, view)
    });
}

/// When a key stored at `at` with `ttl` dies on a server with `clock`: at the tick edge
/// where the clock reaches the store tick plus `ttl`.
fn death(clock: &ServerClock, at: VirtualTime, ttl: u32) -> VirtualTime {
    clock.time_of_tick(clock.tick(at) + ttl)
}

fn check(
    g: &Ghost,
    variant: VisitorVariant,
    period: Duration,
    w0: u64,
    w_end: u64,
    view: &EndView<'_>,
) -> Result<(), Failure> {
    let t_us = period.as_micros() as u64;
    let mut truth: BTreeMap<u64, u64> = BTreeMap::new();
    let mut own: BTreeMap<u64, u64> = BTreeMap::new();
    let mut misattributed = 0;
    for v in &g.visits {
        *truth.entry(v.true_window).or_default() += 1;
        *own.entry(v.own_window).or_default() += 1;
        misattributed += u64::from(v.true_window != v.own_window);
    }
    let windows = (w_end - w0).max(1);
    view.metric(
        "visitor.visits_per_window",
        g.visits.len() as f64 / windows as f64,
    );
    view.metric("visitor.misattributed", misattributed as f64);
    view.metric("visitor.unknown", g.unknown as f64);
    let shown = VisitorCounter::new("visitors", 1, variant).key(0);
    let phase = view.clock(view.server_for(&shown)).phase();
    view.metric("visitor.phase_ms", phase.as_micros() as f64 / 1000.0);

    // Shift: when each shadow key really died, against the end of its read period.
    if variant != VisitorVariant::WindowKey {
        let mut shifts = Vec::new();
        for c in &g.creations {
            let intended = (c.window + 2) * t_us;
            let clock = view.clock(view.server_for(&c.key));
            let died = death(clock, c.at, c.ttl).micros();
            let shift = (died as f64 - intended as f64) / 1e6;
            view.metric(&format!("visitor.shift_w{}", c.window), shift);
            shifts.push(shift);
        }
        if !shifts.is_empty() {
            let mean = shifts.iter().sum::<f64>() / shifts.len() as f64;
            let worst = shifts.iter().fold(0.0f64, |m, s| m.max(s.abs()));
            view.metric("visitor.shift_seconds", mean);
            view.metric("visitor.shift_max_seconds", worst);
        }
    }

    // Per period: the first read of the next period shows its final count.
    let mut lost_total = 0u64;
    let mut lost_max = 0u64;
    let mut extra_total = 0u64;
    for w in w0..w_end {
        let first = g.reads.iter().find(|r| r.at.micros() / t_us == w + 1);
        let Some(first) = first else { continue };
        let want = truth.get(&w).copied().unwrap_or(0);
        let lost = want.saturating_sub(first.value);
        view.metric(&format!("visitor.lost_w{w}"), lost as f64);
        lost_total += lost;
        lost_max = lost_max.max(lost);
        extra_total += first.value.saturating_sub(want);
    }
    view.metric("visitor.lost", lost_total as f64 / windows as f64);
    view.metric("visitor.lost_total", lost_total as f64);
    view.metric("visitor.lost_max", lost_max as f64);
    view.metric("visitor.extra", extra_total as f64 / windows as f64);

    let mut wrong = Vec::new();
    for r in &g.reads {
        let w = r.at.micros() / t_us;
        let want = truth.get(&(w - 1)).copied().unwrap_or(0);
        if r.value != want {
            wrong.push((r, w, want));
        }
    }
    view.metric("visitor.wrong_reads", wrong.len() as f64);
    let Some(&(r, w, want)) = wrong.first() else {
        return Ok(());
    };
    let by_own = own.get(&(w - 1)).copied().unwrap_or(0);
    let offset = r.at.since(VirtualTime(w * t_us));
    Err(Failure::new(format!(
        "value() at t={} ({:.3} s into period {w}) shows {} but period {} had {want} visits \
         ({by_own} by the frontends' own clocks); {} of {} reads were wrong (period k is \
         virtual time [k·T, (k+1)·T), T = {} s)",
        r.at,
        offset.as_secs_f64(),
        r.value,
        w - 1,
        wrong.len(),
        g.reads.len(),
        period.as_secs()
    ))
    .with("value", r.value as i64)
    .with("expected", want as i64)
    .with("expected_own_clock", by_own as i64)
    .with("missing", want.saturating_sub(r.value) as i64)
    .with("extra", r.value.saturating_sub(want) as i64)
    .with("period", (w - 1) as i64)
    .with("wrong_reads", wrong.len() as i64)
    .with("lost_total", lost_total as i64))
}
