//! The lock recipes under loom.

#[allow(unused_imports)]
use super::*;

// ---- lock ------------------------------------------------------------------------------

/// The lock workload of `models/src/lock/harness.rs` with the scenarios' parameters (TTL
/// 10 s, hold 50 ms, backoff 10 ms), one round, and a client giving up after `attempts`
/// failed tries. The bound keeps loom finite: loom has no notion of the holder's 50 ms
/// being up, so unbounded waiters may spin while it never runs again, an infinite family
/// of schedules (their backoffs would also age the shared logical clock past the TTL,
/// where mcsim's timed executions cannot go). With the bound, every client's calls and
/// sleeps add up to far less than the TTL on both sides, and both check the recipe's
/// logic over every order of its calls.
pub(crate) fn lock_model(
    variant: LockVariant,
    n: usize,
    attempts: u32,
) -> impl Fn() + Sync + Send + 'static {
    move || {
        let server = LoomServer::with_defaults();
        // Ghost state: clients inside the critical section. Std atomics, not loom's: the
        // harness watching the clients is not a step of the recipe for loom to permute
        // (loom runs one thread at a time, so they need no synchronization of their own).
        let inside = std::sync::Arc::new(StdAtomicUsize::new(0));
        clients(&server, n, move |c, mc| {
            let inside = inside.clone();
            async move {
                let lock = Lock::new("x", LOCK_TTL_S, variant, c);
                let mut failed = 0;
                while !lock.try_lock(&mc).await.expect("try_lock") {
                    failed += 1;
                    if failed == attempts {
                        return;
                    }
                    mc.sleep(Duration::from_millis(10)).await;
                }
                let before = inside.fetch_add(1, Relaxed);
                if before + 1 > 1 {
                    Sink::Panic.violated(format!(
                        "lock.exclusion: c{c} entered with {before} inside at {:?}",
                        mc.now()
                    ));
                }
                mc.sleep(Duration::from_millis(50)).await;
                inside.fetch_sub(1, Relaxed);
                lock.unlock(&mc).await.expect("unlock");
            }
        });
    }
}

/// The lock key's TTL in the lock cases, seconds (the scenarios' default).
pub(crate) const LOCK_TTL_S: u32 = 10;

pub(crate) fn lock_case(
    variant: &str,
    v: LockVariant,
    n: usize,
    attempts: u32,
    expect_violation: bool,
) {
    agree(
        "lock",
        variant,
        n,
        &format!("rounds = 1\nattempts = {attempts}"),
        expect_violation,
        lock_model(v, n, attempts),
    );
}

#[test]
pub(crate) fn lock_add_2() {
    lock_case("add", LockVariant::Add, 2, 3, false);
}

#[test]
pub(crate) fn lock_add_3() {
    lock_case("add", LockVariant::Add, 3, 2, false);
}

#[test]
pub(crate) fn lock_token_2() {
    lock_case("token", LockVariant::Token, 2, 3, false);
}

#[test]
pub(crate) fn lock_token_3() {
    lock_case("token", LockVariant::Token, 3, 2, false);
}

#[test]
pub(crate) fn lock_get_set_2() {
    lock_case("get-set", LockVariant::GetSet, 2, 3, true);
}

#[test]
pub(crate) fn lock_get_set_3() {
    lock_case("get-set", LockVariant::GetSet, 3, 2, true);
}
