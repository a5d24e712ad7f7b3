//! A call retried while it meets connection errors, for the writers whose acknowledgement
//! needs it to succeed (`lookaside`, `warmup`).

use std::future::Future;

use mcsim::memcache::McError;

/// Runs `call` until it succeeds, at most `attempts` times (at least once) while it meets
/// connection errors: whether it succeeded. Any other error is returned.
pub(crate) async fn attempt<F, Fut>(attempts: u32, call: F) -> Result<bool, McError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<(), McError>>,
{
    for _ in 0..attempts.max(1) {
        match call().await {
            Ok(()) => return Ok(true),
            Err(McError::Transport(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}
