//! The real servers a confirmation talks to: memcached processes started with the
//! simulated servers' settings, or servers given, and the faults a real server allows.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::{ConfirmError, MemcachedDaemon, TcpClient};
use mcsim::protocol::Request;
use mcsim::server::{MIB, ServerConfig};

/// memcached's command line for a simulated server's settings: `-m`, `-I`,
/// `-o slab_chunk_max` and `-M`.
pub fn memcached_args(config: &ServerConfig) -> Vec<String> {
    let mut args = vec![
        "-m".to_string(),
        (config.memory_limit / MIB).to_string(),
        "-I".to_string(),
        config.item_size_max.to_string(),
        "-o".to_string(),
        format!("slab_chunk_max={}", config.slab_chunk_max),
    ];
    if config.no_evict {
        args.push("-M".into());
    }
    args
}

/// One real server.
struct Member {
    /// The process mcsim started, if it did (`None` for a server given, or while down).
    daemon: Option<MemcachedDaemon>,
    /// Whether mcsim started it (so may stop and restart it).
    owned: bool,
    args: Vec<String>,
    addr: SocketAddr,
    /// While crashed: when it comes back.
    restart_at: Option<Instant>,
}

/// The real servers, one per simulated server.
pub(super) struct Fleet {
    members: Vec<Member>,
}

impl Fleet {
    /// Starts one memcached per simulated server with its settings, or takes the servers
    /// given.
    pub(super) fn start(
        configs: &[ServerConfig],
        given: &[SocketAddr],
    ) -> Result<Fleet, ConfirmError> {
        if !given.is_empty() {
            if given.len() != configs.len() {
                return Err(ConfirmError::Servers {
                    want: configs.len(),
                    given: given.len(),
                });
            }
            let members = given
                .iter()
                .map(|&addr| Member {
                    daemon: None,
                    owned: false,
                    args: Vec::new(),
                    addr,
                    restart_at: None,
                })
                .collect();
            return Ok(Fleet { members });
        }
        let mut members = Vec::new();
        for config in configs {
            let args = memcached_args(config);
            crate::ticks::wait_for_start_window();
            let daemon = start(&args)?;
            members.push(Member {
                addr: daemon.addr(),
                daemon: Some(daemon),
                owned: true,
                args,
                restart_at: None,
            });
        }
        Ok(Fleet { members })
    }

    /// Where server `i` listens now (a restarted process listens on a new port).
    pub(super) fn addr(&self, i: usize) -> SocketAddr {
        self.members[i].addr
    }

    /// A crash: a server mcsim started is stopped (by its process id) and comes back
    /// empty after `restart_after`; one it did not start is flushed.
    pub(super) fn crash(
        &mut self,
        i: usize,
        restart_after: Duration,
    ) -> Result<String, ConfirmError> {
        let m = &mut self.members[i];
        if m.owned {
            m.daemon = None;
            m.restart_at = Some(Instant::now() + restart_after);
            Ok(format!(
                "process stopped; restarts empty in {} ms",
                restart_after.as_millis()
            ))
        } else {
            TcpClient::connect(m.addr)?.call(&Request::FlushAll {
                delay: None,
                noreply: false,
            })?;
            Ok("flush_all (a server mcsim did not start cannot be stopped)".into())
        }
    }

    /// Restarts every crashed server whose time has come by `now`; a line for each.
    pub(super) fn restart_due(&mut self, now: Instant) -> Result<Vec<String>, ConfirmError> {
        let mut lines = Vec::new();
        for (i, m) in self.members.iter_mut().enumerate() {
            if m.restart_at.is_some_and(|at| at <= now) {
                m.restart_at = None;
                let daemon = start(&m.args)?;
                m.addr = daemon.addr();
                m.daemon = Some(daemon);
                lines.push(format!("server {i} restarted empty on {}", m.addr));
            }
        }
        Ok(lines)
    }

    /// The instant the next crashed server comes back, if any is down.
    pub(super) fn next_restart(&self) -> Option<Instant> {
        self.members.iter().filter_map(|m| m.restart_at).min()
    }
}

fn start(args: &[String]) -> Result<MemcachedDaemon, ConfirmError> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    MemcachedDaemon::start(&args)?.ok_or(ConfirmError::NoMemcached)
}
