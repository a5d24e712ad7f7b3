//! The rate limiter as an mcsim model: its parameters, the workload each client runs, the
//! ghost state the harness keeps and the invariant over it.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hash;
use std::rc::Rc;

use mcsim::prelude::*;

use crate::recipe::{Evidence, Limiter, RateLimit};

/// A rate-limiter scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Requests admitted per window.
    pub limit: Count,
    /// The window's length.
    pub window_s: Seconds,
    /// Requests each client makes.
    pub requests: Count,
    /// Time between a client's requests.
    pub interval_ms: Millis,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            limit: Count(3),
            window_s: Seconds(1),
            requests: Count(3),
            interval_ms: Millis(100),
        }
    }
}

/// What the harness knows of one window: the requests admitted in it and what the
/// limiter's calls showed of its counter.
#[derive(Debug, Default, Clone, Hash)]
struct Window {
    admitted: u64,
    created: u32,
    counts: BTreeSet<u64>,
    /// The limiter's own calls saw the counter lost and started again: two `add`s
    /// created it, or `incr` returned the same count twice.
    reset_seen: bool,
}

impl Window {
    fn record(&mut self, admitted: bool, evidence: Evidence) {
        self.admitted += u64::from(admitted);
        match evidence {
            Evidence::Created => {
                self.created += 1;
                self.reset_seen |= self.created > 1 || !self.counts.is_empty();
            }
            Evidence::Counted(n) => self.reset_seen |= !self.counts.insert(n),
            Evidence::Read(_) | Evidence::None => {}
        }
    }
}

impl Model for RateLimit {
    const NAME: &'static str = "ratelimit";
    const VARIANTS: &'static [(&'static str, RateLimit)] = &[
        ("as-written", RateLimit::AsWritten),
        ("fixed", RateLimit::Fixed),
    ];
    const INVARIANTS: &'static [&'static str] = &["ratelimit.within_limit"];
    type Params = Params;

    fn check_params(&self, p: &Params, _: &Context) -> Result<(), FieldError> {
        if p.window_s.get() == 0 {
            return Err(FieldError::new(
                "params.window_s",
                None,
                "a window lasts at least one second",
            ));
        }
        Ok(())
    }

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let windows: Rc<RefCell<BTreeMap<u64, Window>>> = Rc::default();
        let denied = Rc::new(RefCell::new(0u64));
        let ghost = windows.clone();
        sim.ghost(move |h| ghost.borrow().hash(h));
        for c in 0..cx.clients {
            let limiter = Limiter {
                variant: *self,
                user: "u1".into(),
                limit: u64::from(p.limit.get()),
                window_s: p.window_s.get(),
            };
            let (windows, denied, p) = (windows.clone(), denied.clone(), p.clone());
            sim.client(cx.skew(c), move |mc| async move {
                for _ in 0..p.requests.get() {
                    match limiter.admit(&mc).await {
                        Ok(d) => {
                            windows
                                .borrow_mut()
                                .entry(d.window)
                                .or_default()
                                .record(d.admitted, d.evidence);
                            *denied.borrow_mut() += u64::from(!d.admitted);
                        }
                        // A timeout or a lost counter: the request is denied.
                        Err(McError::Transport(_) | McError::NotFound) => {
                            *denied.borrow_mut() += 1;
                        }
                        Err(e) => return Err(e),
                    }
                    mc.sleep(p.interval_ms.get()).await;
                }
                Ok(())
            });
        }
        let limit = u64::from(p.limit.get());
        let seen = windows.clone();
        sim.always("ratelimit.within_limit", move || {
            for (w, window) in seen.borrow().iter() {
                if window.admitted > limit && !window.reset_seen {
                    return Err(Failure::new(format!(
                        "window {w} admitted {} requests, over the limit of {limit}, \
                         and no call of the limiter saw its counter lost",
                        window.admitted
                    ))
                    .with("admitted", window.admitted as i64)
                    .with("limit", limit as i64));
                }
            }
            Ok(())
        });
        sim.at_end("ratelimit.figures", move |view| {
            let windows = windows.borrow();
            let admitted: u64 = windows.values().map(|w| w.admitted).sum();
            let over = windows
                .values()
                .map(|w| w.admitted.saturating_sub(limit))
                .max()
                .unwrap_or(0);
            let resets = windows.values().filter(|w| w.reset_seen).count();
            view.metric("ratelimit.admitted", admitted as f64);
            view.metric("ratelimit.denied", *denied.borrow() as f64);
            view.metric("ratelimit.overrun", over as f64);
            view.metric("ratelimit.resets_seen", resets as f64);
            Ok(())
        });
    }
}
