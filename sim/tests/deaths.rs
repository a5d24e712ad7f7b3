//! A client that dies inside a critical section is not a violation of the recipe: the
//! ghost state it was about to undo is undone by the model's death hook
//! ([`Sim::on_death`]) or by [`Holders`], so only the recipe's own faults are reported.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use mcsim::prelude::*;
use mcsim::{ExecConfig, Random, execute};

/// How the harness keeps who is inside.
#[derive(Clone, Copy, Debug)]
enum Ghost {
    /// A counter, raised on entry and lowered on exit, with nothing on death: the trap.
    Naive,
    /// The same counter, lowered by an `on_death` hook for a client that died inside.
    Hooked,
    /// [`Holders`].
    Holders,
}

/// `clients` clients each take one of `permits` slots (`add slot_i` with a 2 s TTL),
/// stay 100 ms, and give it back; `permits = 1` is the add lock. Correct as long as no
/// stay outlives the TTL, so every violation with a dying client is a false alarm.
fn slots(ghost: Ghost, permits: usize, clients: usize) -> impl Fn(&mut Sim) {
    move |sim: &mut Sim| {
        let count: Rc<RefCell<Vec<bool>>> = Rc::new(RefCell::new(vec![false; clients]));
        let holders = sim.holders();
        if let Ghost::Hooked = ghost {
            let count = count.clone();
            sim.on_death(move |c| count.borrow_mut()[c] = false);
        }
        {
            let count = count.clone();
            sim.ghost(move |h| std::hash::Hash::hash(&*count.borrow(), h));
        }
        for c in 0..clients {
            let (count, holders) = (count.clone(), holders.clone());
            sim.client(Skew::default(), move |mc| async move {
                for round in 0..8 {
                    'taking: loop {
                        for slot in 0..permits {
                            let key = Key::new(format!("slot_{slot}")).unwrap();
                            if mc.add(&key, "1".into(), Exptime::secs(2)).await.is_ok() {
                                count.borrow_mut()[c] = true;
                                holders.enter(c);
                                mc.sleep(Duration::from_millis(100)).await;
                                count.borrow_mut()[c] = false;
                                holders.leave(c);
                                let _ = mc.delete(&key).await;
                                break 'taking;
                            }
                        }
                        mc.sleep(Duration::from_millis(300 + 10 * round)).await;
                    }
                }
                Ok(())
            });
        }
        sim.always("permits.exceeded", move || {
            let inside = match ghost {
                Ghost::Holders => holders.count(),
                _ => count.borrow().iter().filter(|x| **x).count(),
            };
            if inside > permits {
                Err(Failure::new(format!(
                    "{inside} clients hold {permits} permits"
                )))
            } else {
                Ok(())
            }
        });
    }
}

/// Executions with deaths (one per execution, likely) that fail, out of 400.
fn failing(ghost: Ghost, permits: usize, clients: usize) -> usize {
    let config = ExecConfig {
        // Aimed at the first slot: a client dies at a call on it or sleeping after one
        // (inside, when the call took it).
        faults: FaultPlan::deaths().on_keys(&["slot_0"]).probability(0.01),
        max_time: Duration::from_secs(30),
        ..ExecConfig::default()
    };
    let setup = slots(ghost, permits, clients);
    (0..400)
        .map(|seed| execute(&config, &setup, &mut Random::new(seed), 0))
        .filter(|e| !e.verdict.is_pass())
        .count()
}

#[test]
fn a_naive_ghost_blames_the_recipe_for_a_dead_holder() {
    // Why the hook exists: without it a lock's holder that died holds forever.
    let (lock, semaphore) = (failing(Ghost::Naive, 1, 3), failing(Ghost::Naive, 2, 4));
    assert!(lock > 10 && semaphore > 10, "{lock} and {semaphore} of 400");
}

#[test]
fn a_dead_holder_is_no_violation_with_the_death_hook() {
    assert_eq!(failing(Ghost::Hooked, 1, 3), 0, "lock");
    assert_eq!(failing(Ghost::Hooked, 2, 4), 0, "semaphore");
}

#[test]
fn a_dead_holder_is_no_violation_with_holders() {
    assert_eq!(failing(Ghost::Holders, 1, 3), 0, "lock");
    assert_eq!(failing(Ghost::Holders, 2, 4), 0, "semaphore");
}

#[test]
fn holders_still_catch_a_lock_that_lets_two_in() {
    // A pause longer than the TTL: the lock expires under its holder, a real bug.
    let config = ExecConfig {
        faults: FaultPlan::pauses(Duration::from_secs(3)).probability(0.2),
        max_time: Duration::from_secs(30),
        ..ExecConfig::default()
    };
    let setup = slots(Ghost::Holders, 1, 3);
    let found = (0..400)
        .map(|seed| execute(&config, &setup, &mut Random::new(seed), 0))
        .find(|e| !e.verdict.is_pass())
        .expect("a pause past the TTL lets a second client in");
    assert_eq!(found.verdict.label(), "permits.exceeded");
}
