//! What several of the executor's tests run. Each test binary that shares this module
//! uses some of it, not all.
#![allow(dead_code)]

use std::time::Duration;

use mcsim::exec::{ExecConfig, Execution, execute};
use mcsim::explore::Random;
use mcsim::memcache::{Exptime, Key, Memcache, Value};
use mcsim::{Failure, Sim, Skew};

/// `setup`'s execution under `random` seeded with `seed`, its virtual time bounded by
/// `max_time`: how the tests of a run that never ends by itself (a spin, a wait without
/// end) run it.
pub fn run_for(max_time: Duration, seed: u64, setup: &dyn Fn(&mut Sim)) -> Execution {
    let config = ExecConfig {
        max_time,
        ..ExecConfig::default()
    };
    execute(&config, setup, &mut Random::new(seed), 0)
}

/// `setup`'s execution `seed` under `random`, run on another thread (so on an engine of
/// its own, fresh), as its `Debug` text: what a reused engine and result must match.
pub fn on_a_fresh_engine(
    config: ExecConfig,
    setup: impl Fn(&mut Sim) + Send + 'static,
    seed: u64,
) -> String {
    std::thread::spawn(move || {
        let e = execute(&config, &setup, &mut Random::new(seed), seed);
        format!("{e:?}")
    })
    .join()
    .unwrap()
}

/// Two clients add a key that expires in a second, wait close to its end and read it:
/// calls whose outcome could depend on the servers' tick phase.
pub fn expiring(sim: &mut Sim) {
    for c in 0..2u64 {
        sim.client(Skew::default(), move |mc| async move {
            let k = Key::new("k").unwrap();
            mc.add(&k, Value::from(c), Exptime::secs(1)).await?;
            mc.sleep(Duration::from_millis(900)).await;
            mc.get(&k).await?;
            Ok(())
        });
    }
}

/// Three clients counting with incr, then add on a miss (each noting it on the timeline),
/// a step check that never fails, and an end check that fails when an increment is lost.
pub fn three_counting(sim: &mut Sim) {
    for _ in 0..3 {
        sim.client(Skew::default(), |mc| async move {
            let k = Key::new("n").unwrap();
            mc.note("incrementing");
            if mc.incr(&k, 1).await.is_err() {
                mc.add(&k, Value::from(1u64), Exptime::NEVER).await.ok();
            }
            Ok(())
        });
    }
    sim.always("never fails", || Ok(()));
    let key = Key::new("n").unwrap();
    sim.at_end("three increments", move |view| {
        let n = view.peek(&key).and_then(|v| v.as_u64()).unwrap_or(0);
        if n == 3 {
            Ok(())
        } else {
            Err(Failure::new(format!("n = {n}")))
        }
    });
}
