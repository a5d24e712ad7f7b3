//! Talking to a real memcached: starting one ([`MemcachedDaemon`]), a blocking TCP client
//! on top of the codec ([`TcpClient`]), and a [`Memcache`](mcsim::memcache::Memcache)
//! backend so recipe code can run against a real server ([`RealMemcache`]).
//!
//! This is the only module that reads the wall clock: a real server keeps real time, so
//! [`RealMemcache::now`](mcsim::memcache::Memcache::now) is a fixed virtual start plus the
//! real time elapsed since the backend was created, and its `sleep` really sleeps. The
//! simulator itself never uses any of this.

mod client;
mod confirm;
mod daemon;
mod fleet;
mod memcache;
mod ticks;

pub use client::{Raw, RawEnd, TcpClient};
pub use confirm::{ConfirmError, ConfirmOptions, Confirmation, Outcome, confirm};
pub use daemon::{DaemonError, MemcachedDaemon};
pub use fleet::memcached_args;
pub use memcache::RealMemcache;
pub use ticks::wait_for_start_window;
