//! Any family under loom through the model API: `mcsim::check(model).loom()` lets loom
//! make every choice of mcsim's executor ([`mcsim::loom::LoomChoices`]), and its verdict
//! must agree with `mcsim::check(model).dfs(None)`, mcsim's own explorer with
//! partial-order reduction, on the same tree. One `xcheck-trait` line per case gives both
//! execution counts.
//!
//! Only built with `--cfg loom`: `just loom`.

#![cfg(loom)]

use mcsim::prelude::*;
use mcsim_models::counter::CounterVariant;
use mcsim_models::lock::LockVariant;

/// Runs both explorers on `check` and asserts they agree with each other and with
/// `expect` (`pass` or the invariant).
fn agree<M: Model + Send + Sync>(name: &str, check: Check<M>, expect: &str)
where
    M::Params: Send + Sync,
{
    let check = check.expect(expect);
    let dfs = check.clone().dfs(None);
    let loom = check.loom();
    println!(
        "xcheck-trait {name} expect={expect} dfs_executions={} loom_executions={}",
        dfs.executions, loom.executions
    );
    assert_eq!(dfs.failure.is_some(), loom.failure.is_some(), "{name}");
}

#[test]
fn lock_get_set_fails_under_both() {
    let check = mcsim::check(LockVariant::GetSet)
        .clients(2)
        .with(|p| p.rounds = Count(1));
    agree("lock/get-set", check, "lock.exclusion");
}

#[test]
fn lock_add_passes_under_both() {
    let check = mcsim::check(LockVariant::Add).clients(2).with(|p| {
        p.rounds = Count(1);
        p.attempts = Count(2);
    });
    agree("lock/add", check, "pass");
}

#[test]
fn counter_get_set_loses_increments_under_both() {
    let check = mcsim::check(CounterVariant::GetSet).clients(2);
    agree("counter/get-set", check, "counter.no_lost_increments");
}

#[test]
fn counter_incr_add_passes_under_both() {
    let check = mcsim::check(CounterVariant::IncrAdd).clients(2);
    agree("counter/incr-add", check, "pass");
}
