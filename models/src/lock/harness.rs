//! The lock workload and its invariant: clients take the lock, stay in the critical
//! section for a while, and release it; the harness tracks who is inside.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::hash::Hash;
use std::rc::Rc;
use std::time::Duration;

use mcsim::memcache::{McError, Memcache};
use mcsim::{Client, Failure, Sim, Skew, VirtualTime};

use crate::lock::recipe::{Lock, LockVariant};

/// Parameters of the lock workload.
#[derive(Debug, Clone, PartialEq)]
pub struct LockParams {
    /// The recipe.
    pub variant: LockVariant,
    /// The lock key's TTL, seconds.
    pub timeout_s: u32,
    /// Time spent in the critical section.
    pub hold: Duration,
    /// Wait between failed attempts.
    pub backoff: Duration,
    /// Critical sections each client tries to enter.
    pub rounds: u32,
    /// Failed attempts after which a client gives up a round (0: it never gives up).
    pub attempts: u32,
    /// Clock skew per client.
    pub skews: Vec<Skew>,
}

/// A client's stay in the critical section: it leaves when the guard drops, at the end of
/// the stay or when the client's process dies inside (a dead holder uses nothing).
struct Inside {
    who: Who,
    overlap: Rc<RefCell<Overlap>>,
    client: usize,
    clock: Client,
}

/// The clients inside the critical section, each with the instant it entered.
type Who = Rc<RefCell<BTreeMap<usize, VirtualTime>>>;

/// How long two or more clients were inside at once: the figure of how much exclusion
/// broke (bookkeeping only: the explorer does not tell states apart by it).
#[derive(Debug, Default)]
struct Overlap {
    /// Since when more than one client is inside, while they are.
    since: Option<VirtualTime>,
    /// The time more than one was inside, over the stays that ended.
    total: Duration,
    /// True once more than one was inside.
    seen: bool,
}

impl Overlap {
    /// A client came in at `now`, leaving `inside` clients inside.
    fn entered(&mut self, inside: usize, now: VirtualTime) {
        if inside > 1 && self.since.is_none() {
            self.since = Some(now);
            self.seen = true;
        }
    }

    /// A client left at `now`, leaving `inside` clients inside.
    fn left(&mut self, inside: usize, now: VirtualTime) {
        if inside < 2
            && let Some(since) = self.since.take()
        {
            self.total += now.since(since);
        }
    }
}

impl Inside {
    fn enter(who: &Who, overlap: &Rc<RefCell<Overlap>>, client: usize, clock: Client) -> Inside {
        let now = clock.global_now();
        let mut inside = who.borrow_mut();
        inside.insert(client, now);
        overlap.borrow_mut().entered(inside.len(), now);
        Inside {
            who: who.clone(),
            overlap: overlap.clone(),
            client,
            clock,
        }
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        let mut inside = self.who.borrow_mut();
        inside.remove(&self.client);
        self.overlap
            .borrow_mut()
            .left(inside.len(), self.clock.global_now());
    }
}

/// How long the first of the clients inside had been there when the last came in.
fn held_ms(inside: &BTreeMap<usize, VirtualTime>) -> i64 {
    let first = inside.values().min();
    let last = inside.values().max();
    match (first, last) {
        (Some(first), Some(last)) => last.since(*first).as_millis() as i64,
        _ => 0,
    }
}

/// Registers the lock workload: `clients` clients competing for one lock.
pub fn setup(p: &LockParams, clients: usize, sim: &mut Sim) {
    // Who is inside, and since when. The explorer tells states apart by who is inside
    // only: the instants are the figure a violation reports (how long the first holder
    // had held the lock).
    let inside: Who = Rc::default();
    let ghost = inside.clone();
    if p.variant == LockVariant::Token {
        // The token names its owner in the value it stores: which client is which
        // matters.
        sim.ghost(move |h| {
            let inside = ghost.borrow();
            inside.len().hash(h);
            inside.keys().for_each(|c| c.hash(h));
        });
    } else {
        // Every client runs the same code and stores the same value: the clients are
        // interchangeable (those of one clock skew), and what tells them apart is
        // whether each is inside.
        let count = inside.clone();
        sim.ghost(move |h| count.borrow().len().hash(h));
        sim.symmetric(move |c, h| ghost.borrow().contains_key(&c).hash(h));
    }
    let overlap: Rc<RefCell<Overlap>> = Rc::default();
    for c in 0..clients {
        let inside = inside.clone();
        let overlap = overlap.clone();
        let p = p.clone();
        let skew = p.skews.get(c).copied().unwrap_or_default();
        sim.client(skew, move |mc| async move {
            let lock = Lock::new("x", p.timeout_s, p.variant, c);
            'rounds: for _ in 0..p.rounds {
                let mut failed = 0;
                loop {
                    match lock.try_lock(&mc).await {
                        Ok(true) => break,
                        // Not taken, or a timeout or a down server (the client cannot
                        // tell which): it backs off and retries.
                        Ok(false) | Err(McError::Transport(_)) => {
                            failed += 1;
                            if failed == p.attempts {
                                mc.note("gives up the round");
                                continue 'rounds;
                            }
                            mc.sleep(p.backoff).await;
                        }
                        Err(e) => return Err(e),
                    }
                }
                let stay = Inside::enter(&inside, &overlap, c, mc.clone());
                mc.note("enters critical section");
                mc.sleep(p.hold).await;
                drop(stay);
                mc.note("leaves critical section");
                match lock.unlock(&mc).await {
                    Ok(()) | Err(McError::Transport(_)) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        });
    }
    // By how much exclusion broke, when an execution runs on past the violation to its
    // end (`mcsim findings`): recorded only by executions in which it broke.
    sim.at_end("lock.exclusion", move |view| {
        // The end checks run once every client has finished or died, each stay ended
        // with it: no overlap is still open.
        let o = overlap.borrow();
        if o.seen {
            view.metric("lock.overlap_ms", o.total.as_secs_f64() * 1000.0);
        }
        Ok(())
    });
    sim.always("lock.exclusion", move || {
        let inside = inside.borrow();
        if inside.len() > 1 {
            let who: Vec<String> = inside.keys().map(|c| format!("c{c}")).collect();
            return Err(Failure::new(format!(
                "{} are inside the critical section at once",
                who.join(" and ")
            ))
            .with("inside", inside.len() as i64)
            .with("held_ms", held_ms(&inside)));
        }
        Ok(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> VirtualTime {
        VirtualTime::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn overlap_lasts_while_two_or_more_are_inside() {
        let mut o = Overlap::default();
        o.entered(1, at(0));
        o.left(0, at(5));
        assert!(!o.seen && o.total.is_zero(), "one at a time is no overlap");
        // Three come in at 10, 12 and 14; one leaves at 20 (two still inside), the next
        // at 30: two or more were inside from 12 to 30.
        o.entered(1, at(10));
        o.entered(2, at(12));
        o.entered(3, at(14));
        o.left(2, at(20));
        assert_eq!(o.since, Some(at(12)), "still two inside");
        o.left(1, at(30));
        o.left(0, at(31));
        assert!(o.seen);
        assert_eq!(o.total, Duration::from_millis(18));
    }
}
