//! The keys' strip under a traced timeline: a state is recorded at the step a key's
//! preview, length or expiry changes, and only then, whether a call, a fault or time
//! passing changed it.

use std::time::Duration;

use mcsim::exec::{ExecConfig, KeyState, execute};
use mcsim::memcache::{Exptime, Key, Memcache, Value};
use mcsim::{Random, Skew, Verdict};

/// One client writing `k` through states that differ in what the strip shows, and in
/// what it does not; a second key `other` written in between.
fn writer(sim: &mut mcsim::Sim) {
    sim.client(Skew::default(), |mc| async move {
        let k = Key::new("k").unwrap();
        let other = Key::new("other").unwrap();
        let long = |last: u8| {
            let mut v = vec![b'a'; 30];
            v[29] = last;
            Value::new(v)
        };
        mc.set(&k, long(b'a'), Exptime::NEVER).await?; // step 1: stored
        mc.set(&k, long(b'b'), Exptime::NEVER).await?; // 2: past the preview, same length
        mc.set(&other, Value::from("x"), Exptime::NEVER).await?; // 3: another key
        mc.get(&k).await?; // 4: a read changes nothing
        mc.touch(&k, Exptime::secs(2)).await?; // 5: an expiry
        mc.set(&k, Value::from("short"), Exptime::secs(2)).await?; // 6: a new value
        mc.sleep(Duration::from_secs(3)).await;
        mc.get(&other).await?; // 7: `k` expired meanwhile
        mc.delete(&other).await?; // 8: deleted
        Ok(())
    });
}

/// A state as the test reads it: its step, its key, and what the strip shows (the
/// preview, the length, whether it expires), `None` when absent.
type Seen<'a> = (u64, &'a str, Option<(&'a str, usize, bool)>);

fn states() -> Vec<KeyState> {
    let config = ExecConfig {
        trace: true,
        phase_free: false,
        ..ExecConfig::default()
    };
    let e = execute(&config, &writer, &mut Random::new(0), 0);
    assert_eq!(e.verdict, Verdict::Pass);
    e.key_states
}

#[test]
fn a_state_is_recorded_where_what_the_strip_shows_changes_and_only_there() {
    let states = states();
    let seen: Vec<Seen<'_>> = states
        .iter()
        .map(|s| {
            let stored = s
                .stored
                .as_ref()
                .map(|v| (v.preview.as_str(), v.len, v.expires.is_some()));
            (s.step, s.key.as_str(), stored)
        })
        .collect();
    let cut = format!("{}…", "a".repeat(24));
    assert_eq!(
        seen,
        vec![
            (1, "k", Some((cut.as_str(), 30, false))),
            (3, "other", Some(("x", 1, false))),
            (5, "k", Some((cut.as_str(), 30, true))),
            (6, "k", Some(("short", 5, true))),
            (7, "k", None),
            (8, "other", None),
        ]
    );
}

#[test]
fn the_strip_is_the_same_on_every_run() {
    assert_eq!(states(), states());
}
