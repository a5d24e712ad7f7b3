//! A call's request is freed however the call ends: executed, never sent (its future
//! dropped before it was polled), or still pending when the execution stops. The engine
//! drops requests by hand (a sent call's future and an idle mailbox hold a placeholder
//! that owns nothing), so this watches the process's resident memory over executions
//! whose requests each hold 64 KiB.

use mcsim::exec::{ExecConfig, Execution, Runs};
use mcsim::explore::Random;
use mcsim::memcache::{Exptime, Key, Memcache};
use mcsim::protocol::{Request, StoreMode};
use mcsim::{Failure, Sim, Skew};

/// The process's resident memory in KiB (`VmRSS` in `/proc/self/status`).
fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status")
}

/// The value each call stores: a leaked request shows at once.
const VALUE: usize = 64 * 1024;

/// A store of a [`VALUE`]-byte value.
fn big_set(key: &str) -> Request {
    Request::Store {
        mode: StoreMode::Set,
        key: Key::new(key).unwrap(),
        flags: 0,
        exptime: Exptime::NEVER,
        data: vec![b'v'; VALUE],
        noreply: false,
    }
}

/// Client 0 drops a call it never sent, then sets; clients 1 and 2 set. The step check
/// fails once the first call ran, so the calls still pending then are never executed.
fn setup(sim: &mut Sim) {
    sim.client(Skew::default(), |mc| async move {
        drop(mc.call(big_set("unsent")));
        mc.call(big_set("a")).await.ok();
        Ok(())
    });
    for key in ["b", "c"] {
        sim.client(Skew::default(), move |mc| async move {
            mc.call(big_set(key)).await.ok();
            Ok(())
        });
    }
    sim.always("stops at the first step", || Err(Failure::new("stop")));
}

#[test]
fn requests_are_freed_whether_run_unsent_or_left_pending() {
    let config = ExecConfig::default();
    let mut strategy = Random::new(3);
    let mut e = Execution::default();
    // The engine's and the result's buffers reach their size in the first executions.
    for i in 0..50 {
        Runs::new(&config).execute_into(&setup, &mut strategy, i, &mut e);
    }
    assert!(!e.verdict.is_pass(), "the step check stops each execution");
    let before = resident_kib();
    for i in 50..350 {
        Runs::new(&config).execute_into(&setup, &mut strategy, i, &mut e);
    }
    let grown = resident_kib().saturating_sub(before);
    // Two requests left pending and one never sent in each of 300 executions would
    // leak 56 MiB; freed, their memory is reused and the process does not grow.
    assert!(grown < 8 * 1024, "resident memory grew by {grown} KiB");
}
