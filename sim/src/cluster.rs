//! Several simulated servers and the client-side key distribution that picks one per key.
//!
//! `modulo` is `crc32(key) % servers` (the classic memcache client); `single` sends every
//! key to server 0. A server that is down stays in the distribution, as with a client that
//! does not eject failed nodes: its keys fail until it restarts.

use crate::clock::VirtualTime;
use crate::memcache::{Key, Value};
use crate::protocol::Request;
use crate::server::{Server, ServerConfig};

/// How keys map to servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Distribution {
    /// `crc32(key) % n` over the servers.
    #[default]
    Modulo,
}

/// The servers of one execution.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// The servers, by index.
    pub servers: Vec<Server>,
    distribution: Distribution,
}

impl Cluster {
    /// Servers booted at time zero.
    pub fn new(configs: &[ServerConfig], distribution: Distribution) -> Cluster {
        let servers = configs
            .iter()
            .map(|c| Server::new(c.clone(), VirtualTime::ZERO))
            .collect();
        Cluster {
            servers,
            distribution,
        }
    }

    /// The server a key maps to.
    pub fn server_for(&self, key: &Key) -> usize {
        let n = self.servers.len();
        if n <= 1 {
            return 0;
        }
        match self.distribution {
            Distribution::Modulo => (crc32fast::hash(key.as_bytes()) as usize) % n,
        }
    }

    /// The server a request goes to (its first key's; server 0 for keyless requests).
    pub fn route(&self, request: &Request) -> usize {
        request
            .keys()
            .first()
            .map(|k| self.server_for(k))
            .unwrap_or(0)
    }

    /// A hash of every server's live items (key, value, flags) at `now`: equal for equal
    /// final states.
    pub fn state_hash(&self, now: VirtualTime) -> u64 {
        let mut bytes = Vec::new();
        for (i, server) in self.servers.iter().enumerate() {
            bytes.extend_from_slice(format!("server {i} up={}\n", server.is_up()).as_bytes());
            let tick = server.tick(now);
            for (key, item) in server.items().iter() {
                if server.items().peek(key, tick).is_some() {
                    bytes.extend_from_slice(key.as_bytes());
                    bytes.push(b' ');
                    bytes.extend_from_slice(&item.data);
                    bytes.extend_from_slice(format!(" {}\n", item.flags).as_bytes());
                }
            }
        }
        crate::trace::fnv1a(&bytes)
    }

    /// The live value under `key`, without side effects.
    pub fn peek(&self, key: &Key, now: VirtualTime) -> Option<Value> {
        let server = &self.servers[self.server_for(key)];
        if !server.is_up() {
            return None;
        }
        server.peek(key, now).map(|i| Value {
            data: i.data.clone(),
            flags: i.flags,
        })
    }
}
