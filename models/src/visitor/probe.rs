//! Measures a server's tick phase from the outside, as a client of a real deployment
//! could: store a key with TTL 1 (it dies at the next tick) and poll until it is gone,
//! first coarsely, then finely one second later.
//!
//! The harness needs the phase to turn the time and TTL of each `add` into the moment the
//! key really dies (memcached's whole-second expiry), without reaching into the server.

use std::time::Duration;

use mcsim::Client;
use mcsim::memcache::{Exptime, Key, McError, Memcache, Value};

/// Polls `key` every `step` from `from` on (true time) until it misses; the last time it
/// hit and the time of the miss.
async fn poll_until_gone(
    mc: &Client,
    key: &Key,
    from: u64,
    step: Duration,
) -> Result<(u64, u64), McError> {
    let mut alive = mc.global_now().micros();
    let wait = from.saturating_sub(alive);
    mc.sleep(Duration::from_micros(wait)).await;
    loop {
        let hit = mc.get(key).await?.is_some();
        let at = mc.global_now().micros();
        if !hit {
            return Ok((alive, at));
        }
        alive = at;
        mc.sleep(step).await;
    }
}

/// The offset of the server's ticks within each second of true time, to about a
/// millisecond. Takes a little over two seconds of virtual time and about 80 calls.
pub async fn tick_phase(mc: &Client) -> Result<Duration, McError> {
    let key = Key::new("clock_probe").expect("valid key");
    mc.set(&key, Value::from("1"), Exptime::secs(1)).await?;
    let (_, gone) = poll_until_gone(mc, &key, 0, Duration::from_millis(20)).await?;
    // The tick came in the last 20 ms (plus a call's latency) before `gone`; the next one
    // comes a second later.
    mc.set(&key, Value::from("1"), Exptime::secs(1)).await?;
    let from = (gone + 1_000_000).saturating_sub(25_000);
    let (alive, gone) = poll_until_gone(mc, &key, from, Duration::from_micros(250)).await?;
    // To the nearest millisecond: the estimate is good to about half a call's latency.
    let edge_ms = (alive + (gone - alive) / 2 + 500) / 1000;
    Ok(Duration::from_millis(edge_ms % 1000))
}
