//! The online-counter workload and its invariant.
//!
//! Frontend clients (each with its own clock skew) serve hits on a deterministic schedule;
//! a hit belongs to a session, and the frontend counts it only if the session was not
//! counted in the last `keys - 1` minutes (the time of the last counted hit is kept in the
//! session, by the frontend's clock, as HL describes). One extra client with an exact clock
//! shows the counter several times a minute, through the traffic and until every key has
//! run out. The harness keeps every counted hit with its true minute, and every hit with
//! its session.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use mcsim::memcache::{McError, Memcache};
use mcsim::{EndView, Failure, Sim, Skew, VirtualTime};

use crate::arrivals::{Traffic, hash3};
use crate::online::recipe::{OnlineCounter, OnlineVariant};

/// Parameters of the online-counter workload.
#[derive(Debug, Clone, PartialEq)]
pub struct OnlineParams {
    /// The recipe.
    pub variant: OnlineVariant,
    /// Keys in HL's ring (six): the shown value covers `keys - 1` minutes.
    pub keys: u32,
    /// Seconds in a "minute".
    pub minute_s: u32,
    /// Minutes with traffic.
    pub minutes: u32,
    /// When hits arrive.
    pub traffic: Traffic,
    /// Distinct sessions the hits come from (0: every hit is a new session).
    pub sessions: u64,
    /// Reads of the counter per minute.
    pub reads_per_minute: u32,
    /// Clock skew per frontend.
    pub skews: Vec<Skew>,
}

#[derive(Debug, Default)]
struct Ghost {
    /// True minute of every counted hit.
    counted: Vec<u64>,
    /// (true minute, session) of every hit, counted or not.
    hits: Vec<(u64, u64)>,
    /// (true time, value) of every read.
    reads: Vec<(VirtualTime, u64)>,
    /// Counted hits whose outcome the frontend could not learn.
    unknown: u64,
}

impl Ghost {
    /// Feeds what the check can tell apart: the counted hits and all hits as multisets
    /// (the check counts them per minute and per session, in no order), the reads in
    /// order (one client makes them, in time order). Two interleavings that count the
    /// same hits in another order are one state.
    fn fingerprint(&self, h: &mut impl std::hash::Hasher) {
        let mut counted = self.counted.clone();
        counted.sort_unstable();
        let mut hits = self.hits.clone();
        hits.sort_unstable();
        std::hash::Hash::hash(&(counted, hits, &self.reads, self.unknown), h);
    }
}

/// Registers the online-counter workload.
pub fn setup(p: &OnlineParams, clients: usize, sim: &mut Sim) {
    let ghost: Rc<RefCell<Ghost>> = Rc::default();
    // The application's session store (not memcached): session -> last counted hit, by
    // the clock of the frontend that counted it.
    let sessions: Rc<RefCell<BTreeMap<u64, u64>>> = Rc::default();
    {
        let (g, s0) = (ghost.clone(), sessions.clone());
        // The explorer fingerprints it at every choice point.
        sim.ghost(move |h| {
            g.borrow().fingerprint(h);
            std::hash::Hash::hash(&*s0.borrow(), h);
        });
    }
    let minute = Duration::from_secs(u64::from(p.minute_s));
    let m_us = minute.as_micros() as u64;
    let window = u64::from(p.keys.max(2) - 1);
    let (m0, m_end) = (1u64, 1 + u64::from(p.minutes));
    for c in 0..clients {
        let (ghost, sessions, p) = (ghost.clone(), sessions.clone(), p.clone());
        let skew = p.skews.get(c).copied().unwrap_or_default();
        sim.client(skew, move |mc| async move {
            let counter = OnlineCounter::new(p.keys, p.minute_s, p.variant);
            // A first look at the counter; when it executes seeds the schedule.
            match mc.get(&counter.key(0)).await {
                Ok(_) | Err(McError::Transport(_)) => {}
                Err(e) => return Err(e),
            }
            let salt = p.traffic.salt(c, mc.global_now().micros());
            let times = p.traffic.times(
                c,
                clients,
                salt,
                VirtualTime(m0 * m_us),
                VirtualTime(m_end * m_us),
            );
            for (i, t) in times.into_iter().enumerate() {
                // Each hit starts afresh: the frontend acts on its arrivals (drawn from
                // `salt`) and on the session store, not on what earlier hits saw.
                mc.remember_only((i, salt));
                mc.sleep(t.since(mc.global_now())).await;
                let true_minute = mc.global_now().micros() / m_us;
                let session = match p.sessions {
                    0 => hash3(salt, i as u64, 0x5E55),
                    n => hash3(p.traffic.seed, c as u64, i as u64) % n,
                };
                ghost.borrow_mut().hits.push((true_minute, session));
                let now = mc.now().micros();
                let last = sessions.borrow().get(&session).copied();
                if last.is_some_and(|l| now.saturating_sub(l) < window * m_us) {
                    continue;
                }
                sessions.borrow_mut().insert(session, now);
                match counter.hit(&mc).await {
                    Ok(()) => ghost.borrow_mut().counted.push(true_minute),
                    Err(McError::Transport(_)) => ghost.borrow_mut().unknown += 1,
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        });
    }
    let (g, p2) = (ghost.clone(), p.clone());
    sim.client(Skew::default(), move |mc| async move {
        let counter = OnlineCounter::new(p2.keys, p2.minute_s, p2.variant);
        let n = u64::from(p2.reads_per_minute.max(1));
        // Through the traffic, then until the last minute's count has left the window.
        for m in m0 + 1..=m_end + window {
            for k in 0..n {
                // Each read starts afresh.
                mc.remember_only((m, k));
                let t = VirtualTime(m * m_us + m_us * (2 * k + 1) / (2 * n));
                mc.sleep(t.since(mc.global_now())).await;
                let now = mc.global_now();
                match counter.value(&mc).await {
                    Ok(v) => g.borrow_mut().reads.push((now, v)),
                    Err(McError::Transport(_)) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    });
    let minutes = u64::from(p.minutes.max(1));
    sim.at_end("online.window_exact", move |view| {
        check(&ghost.borrow(), m_us, window, minutes, view)
    });
}

/// Distinct sessions among `hits` (sorted by minute) whose minute is in `minutes`;
/// `scratch` is a buffer kept across calls.
fn distinct_sessions(
    hits: &[(u64, u64)],
    minutes: std::ops::Range<u64>,
    scratch: &mut Vec<u64>,
) -> u64 {
    let lo = hits.partition_point(|&(m, _)| m < minutes.start);
    let hi = hits.partition_point(|&(m, _)| m < minutes.end);
    scratch.clear();
    scratch.extend(hits[lo..hi.max(lo)].iter().map(|&(_, s)| s));
    scratch.sort_unstable();
    scratch.dedup();
    scratch.len() as u64
}

fn check(
    g: &Ghost,
    m_us: u64,
    window: u64,
    minutes: u64,
    view: &EndView<'_>,
) -> Result<(), Failure> {
    let mut per_minute: BTreeMap<u64, u64> = BTreeMap::new();
    for m in &g.counted {
        *per_minute.entry(*m).or_default() += 1;
    }
    view.metric(
        "online.hits_per_minute",
        g.counted.len() as f64 / minutes as f64,
    );
    view.metric("online.unknown", g.unknown as f64);
    let (mut under_max, mut over_max, mut under_sum, mut over_sum) = (0u64, 0u64, 0u64, 0u64);
    let mut gap_sum = 0u64;
    let mut wrong = Vec::new();
    // The hits by minute, so that each read takes its window's as one slice.
    let mut hits = g.hits.clone();
    hits.sort_unstable();
    let mut sessions = Vec::new();
    // Reads of one minute share its window: distinct sessions in it, by minute.
    let mut distinct: BTreeMap<u64, u64> = BTreeMap::new();
    for &(at, value) in &g.reads {
        let r = at.micros() / m_us;
        let from = r.saturating_sub(window);
        let want: u64 = per_minute.range(from..r).map(|(_, n)| n).sum();
        let unique = *distinct
            .entry(r)
            .or_insert_with(|| distinct_sessions(&hits, from..r, &mut sessions));
        gap_sum += unique.saturating_sub(want);
        let (under, over) = (want.saturating_sub(value), value.saturating_sub(want));
        under_max = under_max.max(under);
        over_max = over_max.max(over);
        under_sum += under;
        over_sum += over;
        if value != want {
            wrong.push((at, r, value, want));
        }
    }
    let reads = g.reads.len().max(1) as f64;
    view.metric("online.under_max", under_max as f64);
    view.metric("online.over_max", over_max as f64);
    view.metric("online.under_mean", under_sum as f64 / reads);
    view.metric("online.over_mean", over_sum as f64 / reads);
    view.metric("online.design_gap", gap_sum as f64 / reads);
    view.metric("online.wrong_reads", wrong.len() as f64);
    let Some(&(at, r, value, want)) = wrong.first() else {
        return Ok(());
    };
    let into = at.since(VirtualTime(r * m_us)).as_secs_f64();
    Err(Failure::new(format!(
        "value() at t={at} ({into:.3} s into minute {r}) shows {value} but minutes {}..={} \
         counted {want} unique hits; {} of {} reads were wrong (worst: {under_max} under, \
         {over_max} over)",
        r.saturating_sub(window),
        r - 1,
        wrong.len(),
        g.reads.len()
    ))
    .with("value", value as i64)
    .with("expected", want as i64)
    .with("under", want.saturating_sub(value) as i64)
    .with("over", value.saturating_sub(want) as i64)
    .with("under_max", under_max as i64)
    .with("over_max", over_max as i64)
    .with("wrong_reads", wrong.len() as i64))
}

#[cfg(test)]
mod tests {
    use super::distinct_sessions;

    #[test]
    fn distinct_sessions_counts_each_session_of_the_window_once() {
        // (minute, session), sorted.
        let hits = [(1, 7), (2, 7), (2, 9), (3, 4), (3, 9), (5, 1)];
        let mut scratch = Vec::new();
        let mut count = |from, to| distinct_sessions(&hits, from..to, &mut scratch);
        assert_eq!(count(0, 1), 0);
        assert_eq!(count(1, 2), 1);
        assert_eq!(count(1, 3), 2, "7 twice, 9 once");
        assert_eq!(count(2, 4), 3, "7, 9 and 4");
        assert_eq!(count(3, 5), 2, "minute 5 is outside");
        assert_eq!(count(3, 6), 3);
        assert_eq!(count(0, 9), 4);
        assert_eq!(count(4, 4), 0);
    }
}
