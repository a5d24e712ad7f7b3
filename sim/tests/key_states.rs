//! The keys' strip under a traced timeline: a state is recorded at the step a key's
//! preview, length or expiry changes, and only then, whether a call, a fault or time
//! passing changed it.

use std::time::Duration;

use mcsim::exec::{ExecConfig, KeyState, execute};
use mcsim::fault::Fault;
use mcsim::memcache::{Exptime, Key, Memcache, Value};
use mcsim::server::ServerConfig;
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

/// Executions on `servers` default servers at their configured tick phase, traced.
fn traced(servers: usize) -> ExecConfig {
    ExecConfig {
        servers: vec![ServerConfig::default(); servers],
        trace: true,
        phase_free: false,
        ..ExecConfig::default()
    }
}

fn states() -> Vec<KeyState> {
    let config = traced(1);
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

/// One key on server 0 and three on server 1: calls go to server 0 while one key of
/// server 1 expires, a scripted fault evicts another, and server 1 crashes with the
/// third. Each change is recorded at the first step after it, as a look at every key
/// after every step records it.
fn quiet_servers(sim: &mut mcsim::Sim, keys: [Key; 4]) {
    let [on0, expiring, evicted, crashed] = keys;
    sim.fault_at(Duration::from_millis(3200), Fault::Crash { server: 1 });
    sim.fault_at(
        Duration::from_millis(2500),
        Fault::Evict {
            server: 1,
            key: String::from_utf8_lossy(evicted.as_bytes()).into_owned(),
        },
    );
    sim.client(Skew::default(), move |mc| async move {
        mc.set(&expiring, Value::from("soon"), Exptime::secs(1))
            .await?;
        mc.set(&evicted, Value::from("gone"), Exptime::NEVER)
            .await?;
        mc.set(&crashed, Value::from("lost"), Exptime::NEVER)
            .await?;
        for i in 0..12u64 {
            mc.set(&on0, Value::from(i), Exptime::NEVER).await?;
            mc.sleep(Duration::from_millis(300)).await;
        }
        Ok(())
    });
}

/// Keys `k0`, `k1`, … that land on `server` of `config`'s cluster.
fn keys_on(config: &ExecConfig, server: usize) -> impl Iterator<Item = Key> {
    let cluster = mcsim::cluster::Cluster::new(&config.servers, config.distribution);
    (0..)
        .map(|i| Key::new(format!("k{i}")).unwrap())
        .filter(move |k| cluster.server_for(k) == server)
}

fn strip(e: &mcsim::Execution) -> Vec<(u64, String, usize, Option<String>)> {
    e.key_states
        .iter()
        .map(|s| {
            let shown = s.stored.as_ref().map(|v| v.preview.clone());
            (s.step, s.key.clone(), s.server, shown)
        })
        .collect()
}

#[test]
fn a_change_on_a_server_no_call_went_to_is_recorded_at_the_next_step() {
    let config = traced(2);
    let on0 = keys_on(&config, 0).next().unwrap();
    let mut on1 = keys_on(&config, 1);
    let mut on1 = || on1.next().unwrap();
    let keys = [on0.clone(), on1(), on1(), on1()];
    let names: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    let setup = move |sim: &mut mcsim::Sim| quiet_servers(sim, keys.clone());
    let e = execute(&config, &setup, &mut Random::new(0), 0);
    assert_eq!(e.verdict, Verdict::Pass);
    let changes: Vec<_> = strip(&e)
        .into_iter()
        .filter(|(_, key, _, _)| *key != names[0])
        .collect();
    let at = |step: u64, key: &str, shown: Option<&str>| {
        (step, key.to_string(), 1, shown.map(String::from))
    };
    assert_eq!(
        changes,
        vec![
            at(1, &names[1], Some("soon")),
            at(2, &names[2], Some("gone")),
            at(3, &names[3], Some("lost")),
            // Its second ends at 1 s: the set at 1.2 s.
            at(8, &names[1], None),
            // Evicted at 2.5 s: the set at 2.7 s.
            at(13, &names[2], None),
            // The server crashes at 3.2 s: the set at 3.3 s.
            at(15, &names[3], None),
        ]
    );
}

#[test]
fn a_delayed_flush_is_recorded_when_it_comes_due_with_no_call_to_its_server() {
    let config = traced(2);
    let flushed = keys_on(&config, 0).next().unwrap();
    let busy = keys_on(&config, 1).next().unwrap();
    let names = [flushed.to_string(), busy.to_string()];
    let setup = move |sim: &mut mcsim::Sim| {
        let (flushed, busy) = (flushed.clone(), busy.clone());
        sim.client(Skew::default(), move |mc| async move {
            mc.set(&flushed, Value::from("old"), Exptime::NEVER).await?;
            // Goes to the first server; hides its items 2 s from now.
            mc.flush_all(Some(2)).await?;
            for i in 0..12u64 {
                mc.set(&busy, Value::from(i), Exptime::NEVER).await?;
                mc.sleep(Duration::from_millis(300)).await;
            }
            Ok(())
        });
    };
    let e = execute(&config, &setup, &mut Random::new(0), 0);
    assert_eq!(e.verdict, Verdict::Pass);
    let changes: Vec<_> = strip(&e)
        .into_iter()
        .filter(|(_, key, _, _)| *key == names[0])
        .collect();
    let at = |step: u64, shown: Option<&str>| (step, names[0].clone(), 0, shown.map(String::from));
    // Its tick comes at 1 s (memcached hides what was stored before the flush's tick
    // less one): the set at 1.2 s.
    assert_eq!(changes, vec![at(1, Some("old")), at(7, None)]);
}
