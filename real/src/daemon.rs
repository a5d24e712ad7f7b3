//! Starting a real memcached for tests: find the binary, pick a free loopback port, spawn
//! it, wait until it accepts connections, and kill it (by its process id) when dropped.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::client::TcpClient;
use mcsim::memcache::McError;

/// Why a memcached could not be started.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// No free port could be found.
    #[error("no free port: {0}")]
    Port(std::io::Error),
    /// The binary could not be run.
    #[error("cannot run {binary}: {source}")]
    Spawn {
        /// The binary.
        binary: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The process exited or never accepted a connection.
    #[error("memcached did not come up: {0}")]
    NotReady(String),
}

/// A memcached process listening on `127.0.0.1`, killed when this value is dropped.
#[derive(Debug)]
pub struct MemcachedDaemon {
    child: Child,
    addr: SocketAddr,
    binary: PathBuf,
}

/// How many times a start is retried (another process may take the port in between).
const ATTEMPTS: usize = 3;
/// Connection attempts while waiting for the server, and the pause between them.
const READY_POLLS: usize = 200;
const READY_PAUSE: Duration = Duration::from_millis(25);

impl MemcachedDaemon {
    /// The `memcached` binary: `$MEMCACHED` if set, then each directory of `$PATH`, then
    /// `/usr/bin` and `/usr/local/bin`.
    pub fn find_binary() -> Option<PathBuf> {
        if let Some(explicit) = std::env::var_os("MEMCACHED") {
            let p = PathBuf::from(explicit);
            return p.is_file().then_some(p);
        }
        let path_dirs = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default();
        path_dirs
            .into_iter()
            .chain([PathBuf::from("/usr/bin"), PathBuf::from("/usr/local/bin")])
            .map(|d| d.join("memcached"))
            .find(|p| p.is_file())
    }

    /// Starts `memcached -l 127.0.0.1 -p PORT -U 0 <args>` (plus `-u root` when running
    /// as root, which memcached otherwise refuses). `Ok(None)` if there is no binary.
    pub fn start(args: &[&str]) -> Result<Option<MemcachedDaemon>, DaemonError> {
        let Some(binary) = Self::find_binary() else {
            return Ok(None);
        };
        let mut last = String::new();
        for _ in 0..ATTEMPTS {
            match Self::start_once(&binary, args)? {
                Ok(daemon) => return Ok(Some(daemon)),
                Err(why) => last = why,
            }
        }
        Err(DaemonError::NotReady(last))
    }

    /// One attempt: `Ok(Err(why))` when it is worth retrying on another port.
    fn start_once(
        binary: &Path,
        args: &[&str],
    ) -> Result<Result<MemcachedDaemon, String>, DaemonError> {
        let port = free_port().map_err(DaemonError::Port)?;
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let mut command = Command::new(binary);
        command
            .args(["-l", "127.0.0.1", "-p", &port.to_string(), "-U", "0"])
            .args(args);
        if running_as_root() && !args.contains(&"-u") {
            command.args(["-u", "root"]);
        }
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        let child = command.spawn().map_err(|source| DaemonError::Spawn {
            binary: binary.to_path_buf(),
            source,
        })?;
        let mut daemon = MemcachedDaemon {
            child,
            addr,
            binary: binary.to_path_buf(),
        };
        for _ in 0..READY_POLLS {
            if let Ok(Some(status)) = daemon.child.try_wait() {
                return Ok(Err(format!("memcached exited with {status}")));
            }
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                // Whoever answers must be this process: another test may have started a
                // memcached on the same port a moment earlier, and this one's bind failed.
                return Ok(match daemon.answering_pid() {
                    Some(pid) if pid == daemon.child.id() => Ok(daemon),
                    other => Err(format!(
                        "port {port} is answered by process {other:?}, not {}",
                        daemon.child.id()
                    )),
                });
            }
            std::thread::sleep(READY_PAUSE);
        }
        Ok(Err(format!("no connection to {addr} accepted")))
    }

    /// The `pid` the server on this daemon's port reports in `stats`.
    fn answering_pid(&self) -> Option<u32> {
        let mut client = TcpClient::connect(self.addr).ok()?;
        let stats = client.call(&mcsim::protocol::Request::Stats).ok()?;
        stats.stat("pid")?.parse().ok()
    }

    /// For a test that compares with a real memcached: [`MemcachedDaemon::start`], and
    /// without a binary a `SKIPPED` line naming `test` and `None`, except where the
    /// environment sets `CI`, where a missing binary fails the test. A binary that does
    /// not start fails it too.
    pub fn start_for_test(test: &str, args: &[&str]) -> Option<MemcachedDaemon> {
        match Self::start(args) {
            Ok(Some(d)) => Some(d),
            Ok(None) => {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "the {test} test needs a memcached binary on CI"
                );
                eprintln!(
                    "SKIPPED: the {test} test needs a memcached binary (apt-get install -y memcached)"
                );
                None
            }
            Err(e) => panic!("cannot start memcached for the {test} test: {e}"),
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The binary it runs.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// A new connection to it.
    pub fn connect(&self) -> Result<TcpClient, McError> {
        TcpClient::connect(self.addr)
    }
}

impl Drop for MemcachedDaemon {
    fn drop(&mut self) {
        // `Child::kill` signals exactly this process id.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port that was free a moment ago.
fn free_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}

/// True if the effective user id is 0.
fn running_as_root() -> bool {
    if let Ok(status) = std::fs::read_to_string("/proc/self/status")
        && let Some(line) = status.lines().find(|l| l.starts_with("Uid:"))
    {
        // Uid: real effective saved filesystem
        return line.split_whitespace().nth(2) == Some("0");
    }
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}
