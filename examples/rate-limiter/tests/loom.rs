//! The rate limiter cross-checked under loom through the same model: loom makes every
//! choice of mcsim's executor, and must agree with mcsim's own exhaustive explorer.
//!
//! Only built with `--cfg loom`:
//! `RUSTFLAGS="--cfg loom" cargo test -p rate-limiter --test loom --release`.

#![cfg(loom)]

use mcsim::prelude::*;
use rate_limiter::RateLimit;

fn small(variant: RateLimit) -> Check<RateLimit> {
    mcsim::check(variant).clients(2).with(|p| {
        p.limit = Count(1);
        p.requests = Count(1);
    })
}

#[test]
fn loom_and_dfs_agree_that_the_limiter_as_written_overruns() {
    let check = small(RateLimit::AsWritten).expect("ratelimit.within_limit");
    let dfs = check.clone().dfs(None);
    let loom = check.loom();
    println!(
        "dfs {} executions, loom {}",
        dfs.executions, loom.executions
    );
    assert!(dfs.failure.is_some() && loom.failure.is_some());
}

#[test]
fn loom_and_dfs_agree_that_the_fixed_limiter_holds() {
    let check = small(RateLimit::Fixed).with(|p| p.requests = Count(2));
    let dfs = check.clone().dfs(None);
    let loom = check.loom();
    println!(
        "dfs {} executions, loom {}",
        dfs.executions, loom.executions
    );
    assert!(dfs.exhaustive && loom.exhaustive);
}
