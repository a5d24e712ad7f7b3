//! The [`Memcache`] backend for a real server.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::client::TcpClient;
use mcsim::clock::VirtualTime;
use mcsim::memcache::{McError, Memcache, Transport};
use mcsim::protocol::{Reply, Request};

/// Recipe code's view of a real memcached: one connection, opened on first use and again
/// after any failure.
///
/// Time is real here: [`Memcache::now`] is `start` plus the wall-clock time elapsed since
/// this value was created, and [`Memcache::sleep`] blocks the thread. A reply the client
/// cannot make sense of counts as a timeout (the command may have been applied).
#[derive(Debug)]
pub struct RealMemcache {
    addr: SocketAddr,
    client: RefCell<Option<TcpClient>>,
    origin: Instant,
    start: VirtualTime,
}

impl RealMemcache {
    /// A backend for the server at `addr`, whose clock starts at `start`.
    pub fn new(addr: SocketAddr, start: VirtualTime) -> RealMemcache {
        RealMemcache {
            addr,
            client: RefCell::new(None),
            origin: Instant::now(),
            start,
        }
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// One blocking call, reconnecting first if needed.
    pub fn call_blocking(&self, request: &Request) -> Result<Reply, Transport> {
        let mut slot = self.client.borrow_mut();
        if slot.is_none() {
            *slot = Some(TcpClient::connect(self.addr).map_err(|_| Transport::ServerDown)?);
        }
        let Some(client) = slot.as_mut() else {
            return Err(Transport::ServerDown);
        };
        match client.call(request) {
            Ok(reply) => Ok(reply),
            Err(e) => {
                *slot = None;
                Err(match e {
                    McError::Transport(t) => t,
                    _ => Transport::TimedOut,
                })
            }
        }
    }
}

impl Memcache for RealMemcache {
    async fn call(&self, request: Request) -> Result<Reply, Transport> {
        self.call_blocking(&request)
    }

    fn now(&self) -> VirtualTime {
        self.start + self.origin.elapsed()
    }

    async fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration)
    }
}
