//! The cache workload: every client serves a page a number of times, each page reading a
//! cached query; the values expire and are rebuilt from a slow backend. The harness counts
//! who is querying the backend, writes HL's debugging strip into the trace, and measures
//! backend queries per expiry, the longest wait and the oldest value served.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use mcsim::memcache::{McError, Memcache};
use mcsim::{Failure, Sim, Skew};

use crate::cache::ghost::{Frontend, Ghost};
use crate::cache::recipe::{Cache, CacheConfig};

/// Parameters of the cache workload.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheParams {
    /// The recipe and its knobs.
    pub cache: CacheConfig,
    /// How long one backend query takes.
    pub rebuild: Duration,
    /// Pages each client serves.
    pub requests: u32,
    /// Pause between a client's pages.
    pub interval: Duration,
    /// Spread the clients' first pages evenly over one interval (otherwise all start at
    /// once and stay in step, the worst case for a dog-pile).
    pub spread: bool,
    /// Number of cache keys; page `r` of a client reads key `r mod keys`.
    pub keys: u32,
    /// Client 0 stores every key's value before the pages begin (the others start one
    /// interval later): the expiries are the only misses, no cold start.
    pub warm: bool,
    /// Clock skew per client.
    pub skews: Vec<Skew>,
}

/// The name of cache key `i`.
pub fn key_name(i: u32) -> String {
    format!("cache_{i}")
}

/// Registers the cache workload and its invariant.
pub fn setup(p: &CacheParams, clients: usize, sim: &mut Sim) {
    let ghost = Rc::new(RefCell::new(Ghost {
        rebuild: p.rebuild,
        live: clients,
        ..Ghost::default()
    }));
    crate::ghost::watch(sim, &ghost);
    // Every client runs the same pages and writes rows that name no client: they are
    // interchangeable (a spread start is a sleep, which each client's state shows).
    // (A warm start singles out client 0: no symmetry then.)
    if !p.warm {
        let running = ghost.clone();
        sim.symmetric(move |c, h| running.borrow().running_for(c, h));
    }
    let caches: Vec<Cache> = (0..p.keys.max(1))
        .map(|i| Cache::new(&key_name(i), p.cache.clone()))
        .collect();
    for c in 0..clients {
        let (ghost, caches, p) = (ghost.clone(), caches.clone(), p.clone());
        let skew = p.skews.get(c).copied().unwrap_or_default();
        sim.client(skew, move |mc| async move {
            let fe = Frontend {
                mc: mc.clone(),
                ghost: ghost.clone(),
            };
            if p.warm && c == 0 {
                for cache in &caches {
                    let rows = ghost.borrow_mut().warm_rows(mc.global_now());
                    cache.warm(&mc, rows, p.rebuild).await?;
                }
            } else if p.warm {
                mc.sleep(p.interval).await;
            }
            if p.spread {
                mc.sleep(p.interval * c as u32 / clients as u32).await;
            }
            for r in 0..p.requests {
                // Each page starts afresh: nothing of the pages before carries over.
                mc.remember_only(r);
                let cache = &caches[r as usize % caches.len()];
                let started = mc.global_now();
                match cache.fetch(&mc, &fe, &fe, &fe).await {
                    Ok(answer) => {
                        let now = mc.global_now();
                        ghost.borrow_mut().served(&answer, now.since(started), now);
                    }
                    // The page fails; the next one tries again.
                    Err(McError::Transport(_)) => ghost.borrow_mut().errors += 1,
                    Err(e) => return Err(e),
                }
                mc.sleep(p.interval).await;
            }
            let mut g = ghost.borrow_mut();
            g.live -= 1;
            if g.live == 0 {
                let strips = g.strips_text(usize::MAX);
                drop(g);
                mc.note(format_args!("strips at the end: {strips}"));
            }
            Ok(())
        });
    }
    // One end check both records the metrics (every execution, pass or fail) and judges:
    // a run that broke the invariant midway still reports its numbers.
    sim.at_end("cache.single_rebuild", move |view| {
        let g = ghost.borrow();
        let queries = g.total_queries();
        let expiries = g.total_expiries();
        view.metric("cache.backend_queries", queries as f64);
        view.metric("cache.expiries", expiries as f64);
        view.metric(
            "cache.queries_per_expiry",
            if expiries == 0 {
                0.0
            } else {
                queries as f64 / expiries as f64
            },
        );
        view.metric("cache.max_concurrent_rebuilds", g.max_concurrent as f64);
        view.metric(
            "cache.longest_wait_ms",
            g.longest_wait.as_secs_f64() * 1000.0,
        );
        view.metric("cache.oldest_value_ms", g.oldest.as_secs_f64() * 1000.0);
        view.metric("cache.fresh", g.fresh as f64);
        view.metric("cache.stale_served", g.stale as f64);
        view.metric("cache.empty_served", g.empty as f64);
        view.metric("cache.errors", g.errors as f64);
        for e in crate::cache::recipe::Event::ALL {
            let l = e.letter();
            view.metric(&format!("cache.strip.{l}"), g.letters(l) as f64);
        }
        if let Some(o) = &g.overlap {
            let who: Vec<String> = o.clients.iter().map(|c| format!("c{c}")).collect();
            return Err(Failure::new(format!(
                "{} queried the backend for {} at once (t={}); {queries} queries for \
                 {expiries} expiries; strip {}",
                who.join(" and "),
                o.key,
                o.at,
                g.strips_text(200)
            ))
            .with("concurrent", g.max_concurrent as i64)
            .with("queries", queries as i64)
            .with("expiries", expiries as i64)
            .with(
                "strip_len",
                g.strips.values().map(|s| s.len()).sum::<usize>() as i64,
            ));
        }
        Ok(())
    });
}
