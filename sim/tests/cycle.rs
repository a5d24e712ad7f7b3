//! A recipe that goes round a cycle of server states for ever is a livelock, found long
//! before the step budget, with one turn of its cycle shown and a counterexample that is
//! a screenful; a cycle that an expiry ahead will end is not one.

use std::time::Duration;

use mcsim::Verdict;
use mcsim::prelude::*;

/// A semaphore taken with `incr` first and given back with `decr` when over the limit:
/// the clients that get a permit never give it back, so the others go round `incr`,
/// `decr`, a sleep, for ever (the count 2 → 3 → 2 with two permits), unless the count
/// expires.
#[derive(Debug, Clone, Copy, PartialEq)]
struct IncrFirst {
    /// Permits.
    permits: u64,
    /// The count's TTL in seconds (0: none).
    ttl_s: u32,
}

impl Model for IncrFirst {
    const NAME: &'static str = "incr-first";
    const VARIANTS: &'static [(&'static str, IncrFirst)] = &[
        ("two-permits", IncrFirst::TWO),
        (
            "one-permit",
            IncrFirst {
                permits: 1,
                ttl_s: 0,
            },
        ),
        (
            "expiring",
            IncrFirst {
                permits: 2,
                ttl_s: 600,
            },
        ),
    ];
    const INVARIANTS: &'static [&'static str] = &[];
    type Params = ();

    fn setup(&self, _: &(), cx: &Context, sim: &mut Sim) {
        let IncrFirst { permits, ttl_s } = *self;
        for c in 0..cx.clients {
            sim.client(cx.skew(c), move |mc| async move {
                let count = Key::new("count").unwrap();
                loop {
                    let held = match mc.incr(&count, 1).await {
                        Ok(held) => held,
                        Err(McError::NotFound) => {
                            match mc.add(&count, "1".into(), Exptime::secs(ttl_s)).await {
                                Ok(()) => 1,
                                Err(McError::NotStored) => continue,
                                Err(e) => return Err(e),
                            }
                        }
                        Err(e) => return Err(e),
                    };
                    if held <= permits {
                        mc.progress();
                        // Never gives its permit back.
                        return Ok(());
                    }
                    mc.decr(&count, 1).await?;
                    mc.sleep(Duration::from_millis(50)).await;
                }
            });
        }
    }
}

impl IncrFirst {
    const TWO: IncrFirst = IncrFirst {
        permits: 2,
        ttl_s: 0,
    };
}

#[test]
fn going_round_a_cycle_of_states_is_a_livelock_with_one_turn_shown() {
    let figures = check(IncrFirst::TWO)
        .clients(3)
        .expect("livelock")
        .random(20);
    let e = figures.failure.expect("found").execution;
    let Verdict::Livelock {
        step,
        cycle: Some(cycle),
        ..
    } = &e.verdict
    else {
        panic!("not a cycle: {}", e.verdict);
    };
    // Found once the cycle came round 10,000 times, not at the budget of 100,000 steps.
    assert!(*step < 20_000, "{step}");
    assert_eq!(cycle.period, 2);
    let mut turn = cycle.turn.clone();
    turn.sort();
    assert!(
        turn[0].ends_with("decr count 1 -> 2") && turn[1].ends_with("incr count 1 -> 3"),
        "{turn:?}"
    );
    let text = e.verdict.to_string();
    assert!(text.contains("going round a cycle"), "{text}");
    assert!(text.contains("one turn, 2 calls"), "{text}");
}

#[test]
fn a_cycling_failure_is_a_screenful_with_a_short_replay_line() {
    let text = std::panic::catch_unwind(|| {
        check(IncrFirst {
            permits: 1,
            ttl_s: 0,
        })
        .clients(3)
        .random(20);
    })
    .expect_err("a livelock is not a pass");
    let text = text.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(text.contains("got livelock"), "{text}");
    assert!(text.lines().count() < 80, "{} lines", text.lines().count());
    // One client takes the permit, one goes round: two clients are all it takes.
    assert!(text.contains("shrunk to    2 clients"), "{text}");
    let replay = text
        .lines()
        .find(|l| l.contains("MCSIM_REPLAY="))
        .expect("a replay line");
    let token = replay.split('\'').nth(1).unwrap();
    assert!(token.len() < 80, "{token}");
}

/// The same cycle, with a TTL on the count long enough for it to come round 10,000
/// times: when the count expires the waiting client takes a permit, so the cycle is no
/// livelock and the run passes.
#[test]
fn a_cycle_an_expiry_will_end_is_no_livelock() {
    let figures = check(IncrFirst {
        permits: 2,
        ttl_s: 600,
    })
    .clients(3)
    .random(20);
    assert_eq!(figures.verdicts.get("pass"), Some(&20));
}
