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

impl Inside {
    fn enter(who: &Who, overlap: &Rc<RefCell<Overlap>>, client: usize, clock: Client) -> Inside {
        let now = clock.global_now();
        let mut inside = who.borrow_mut();
        inside.insert(client, now);
        let mut o = overlap.borrow_mut();
        if inside.len() > 1 && o.since.is_none() {
            o.since = Some(now);
            o.seen = true;
        }
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
        let mut o = self.overlap.borrow_mut();
        if inside.len() < 2
            && let Some(since) = o.since.take()
        {
            o.total += self.clock.global_now().since(since);
        }
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
        let o = overlap.borrow();
        if o.seen {
            let open = o
                .since
                .map_or(Duration::ZERO, |since| view.now().since(since));
            let total = o.total + open;
            view.metric("lock.overlap_ms", total.as_secs_f64() * 1000.0);
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
