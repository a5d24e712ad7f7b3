//! A recipe that never gets anywhere is reported fast, with a screenful, and its wait is
//! measured by the recipe's own progress, not by the writes of its retry loop.

use std::time::{Duration, Instant};

use mcsim::Verdict;
use mcsim::prelude::*;

mod support;

/// A lock whose first holder leaves without releasing it (no TTL): every other client
/// retries for ever, writing a heartbeat before each attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Forgotten {
    /// The model marks a client's progress when it takes the lock.
    Marked,
    /// The same without marks: the heartbeat writes count as progress.
    Unmarked,
    /// Marked, retrying at once instead of sleeping: the step budget ends it.
    Busy,
}

impl Model for Forgotten {
    const NAME: &'static str = "forgotten";
    const VARIANTS: &'static [(&'static str, Forgotten)] = &[
        ("marked", Forgotten::Marked),
        ("unmarked", Forgotten::Unmarked),
        ("busy", Forgotten::Busy),
    ];
    const INVARIANTS: &'static [&'static str] = &[];
    type Params = ();

    fn setup(&self, _: &(), cx: &Context, sim: &mut Sim) {
        for c in 0..cx.clients {
            let marked = *self != Forgotten::Unmarked;
            let pause = if *self == Forgotten::Busy {
                Duration::ZERO
            } else {
                Duration::from_secs(1)
            };
            sim.client(cx.skew(c), move |mc| async move {
                let lock = Key::new("lock").unwrap();
                let beat = Key::new(format!("heartbeat_{c}")).unwrap();
                let mut n = 0u64;
                loop {
                    n += 1;
                    mc.set(&beat, n.into(), Exptime::secs(0)).await?;
                    if mc.add(&lock, "1".into(), Exptime::secs(0)).await.is_ok() {
                        if marked {
                            mc.progress();
                        }
                        // Leaves without releasing the lock.
                        return Ok(());
                    }
                    mc.sleep(pause).await;
                }
            });
        }
    }
}

fn longest_wait(figures: &Figures) -> Duration {
    match &figures.failure.as_ref().expect("stuck").execution.verdict {
        Verdict::Stuck { longest_wait, .. } => longest_wait.1,
        other => panic!("not stuck: {other}"),
    }
}

#[test]
fn a_stuck_retry_loop_is_reported_in_seconds_and_waits_by_the_recipes_progress() {
    let started = Instant::now();
    let marked = check(Forgotten::Marked)
        .clients(2)
        .expect("stuck")
        .random(20);
    let unmarked = check(Forgotten::Unmarked)
        .clients(2)
        .expect("stuck")
        .random(20);
    let busy = check(Forgotten::Busy).clients(2).expect("stuck").random(20);
    assert!(busy.failure.is_some());
    // The default budget of a check ends such a run quickly (not a timed assertion of
    // speed: a bound that only a runaway budget breaks).
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    // Marked: the waiting client never took the lock, whatever it wrote meanwhile.
    assert!(
        longest_wait(&marked) > Duration::from_secs(60),
        "{:?}",
        longest_wait(&marked)
    );
    // Unmarked: its heartbeat, written every second, counts as progress.
    assert!(
        longest_wait(&unmarked) <= Duration::from_secs(1),
        "{:?}",
        longest_wait(&unmarked)
    );
}

#[test]
fn a_stuck_report_is_a_screenful_with_the_whole_in_a_file() {
    let text = std::panic::catch_unwind(|| {
        check(Forgotten::Marked).clients(2).random(20);
    })
    .expect_err("stuck is not pass");
    let text = text.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(text.contains("got stuck"), "{text}");
    assert!(text.lines().count() < 80, "{} lines", text.lines().count());
    let file = text
        .split("the whole report: ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .expect("the whole report's file");
    let whole = std::fs::read_to_string(file.trim()).unwrap();
    assert!(whole.lines().count() > text.lines().count());
}

/// A client that waits for the other's write by sleeping for no time, over and over:
/// virtual time cannot move on past it, and the execution is a livelock found at once,
/// not an engine that never returns. A client that sleeps for no time a bounded number
/// of times is no finding.
#[test]
fn sleeping_for_no_time_in_a_loop_is_a_livelock_found_at_once() {
    use mcsim::exec::{ExecConfig, execute};
    use mcsim::explore::{Random, Replay};
    let spinning = |rounds: Option<u32>| {
        move |sim: &mut Sim| {
            sim.client(Skew::default(), move |mc| async move {
                let flag = Key::new("flag").unwrap();
                let mut n = 0;
                while mc.get(&flag).await?.is_none() {
                    // Polls the flag again only after its sleeps: a busy wait.
                    loop {
                        n += 1;
                        mc.sleep(Duration::ZERO).await;
                        if rounds.is_some_and(|r| n % r == 0) {
                            break;
                        }
                    }
                }
                Ok(())
            });
            sim.client(Skew::default(), |mc| async move {
                let flag = Key::new("flag").unwrap();
                mc.set(&flag, "1".into(), Exptime::NEVER).await?;
                Ok(())
            });
        }
    };
    let config = ExecConfig::default();
    // A regression would never return: it fails here instead of hanging the suite.
    let returning = |rounds: Option<u32>, seed: u64| {
        let (sent, received) = std::sync::mpsc::channel();
        let config = config.clone();
        std::thread::spawn(move || {
            let e = execute(&config, &spinning(rounds), &mut Random::new(seed), 0);
            sent.send(e).ok();
        });
        received
            .recv_timeout(Duration::from_secs(10))
            .expect("the execution returns")
    };
    let mut livelocks = 0;
    for seed in 0..10 {
        let e = returning(None, seed);
        match &e.verdict {
            Verdict::Livelock { wakes, waiting, .. } => {
                assert!(*wakes > 10_000, "{wakes}");
                assert!(
                    waiting.iter().any(|w| w.contains("sleeping")),
                    "{waiting:?}"
                );
                assert!(e.verdict.to_string().contains("sleeping for no time"));
                // The replay line reproduces it.
                let again = execute(&config, &spinning(None), &mut Replay::new(e.schedule), 0);
                assert_eq!(again.verdict, e.verdict);
                livelocks += 1;
            }
            // The writer ran first: the flag is there at the first look.
            Verdict::Pass => {}
            other => panic!("seed {seed}: {other}"),
        }
        // A thousand sleeps for no time between looks end when the writer has written.
        let bounded = returning(Some(1000), seed);
        assert_eq!(bounded.verdict, Verdict::Pass, "seed {seed}");
    }
    assert!(livelocks > 0, "no seed let the reader look first");
}

/// A client that marks its progress once, first thing, and then only reads, for ever:
/// once a client marks, its calls are no progress, so its wait runs from that mark to
/// the end of the run. The mark counts when it is made, while the client keeps running
/// (not only when some client ends); its reads are of keys never read before, so no
/// repetition ends the run early.
#[test]
fn a_mark_made_while_a_client_keeps_running_counts() {
    let setup = |sim: &mut Sim| {
        sim.client(Skew::default(), |mc| async move {
            mc.progress();
            for n in 0u64.. {
                mc.sleep(Duration::from_secs(1)).await;
                mc.get(&Key::new(format!("k{n}")).unwrap()).await?;
            }
            Ok(())
        });
    };
    let execution = support::run_for(Duration::from_secs(30), 0, &setup);
    match execution.verdict {
        Verdict::Stuck { longest_wait, .. } => assert!(
            longest_wait.1 >= Duration::from_secs(25),
            "{longest_wait:?}"
        ),
        other => panic!("not stuck: {other}"),
    }
}

/// A client's wait up to its finish counts in the liveness figures like any other: here
/// 5 s asleep, then a read that changes nothing, then done. A death rule that never
/// fires (at most 0 per execution) makes the execution record the figures.
#[test]
fn a_finished_clients_last_wait_counts_in_the_liveness_figures() {
    let config = mcsim::exec::ExecConfig {
        faults: mcsim::fault::FaultPlan::deaths().max(0),
        ..mcsim::exec::ExecConfig::default()
    };
    let setup = |sim: &mut Sim| {
        sim.client(Skew::default(), |mc| async move {
            mc.sleep(Duration::from_secs(5)).await;
            mc.get(&Key::new("k").unwrap()).await?;
            Ok(())
        });
    };
    let e = mcsim::exec::execute(&config, &setup, &mut mcsim::explore::Random::new(0), 0);
    assert!(e.verdict.is_pass(), "{}", e.verdict);
    let waited = e.metrics["liveness.longest_wait_s"];
    assert!((5.0..5.1).contains(&waited), "{waited}");
    assert_eq!(e.metrics["liveness.stuck_clients"], 0.0);
}
