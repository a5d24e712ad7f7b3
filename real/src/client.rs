//! A blocking memcached client over one TCP connection, built on the codec.
//!
//! [`TcpClient::call`] sends one [`Request`] and reads its [`Reply`]. A request sent with
//! `noreply` (or a meta request with `q`) is followed by `mn`, and the client reads up to
//! the `MN` marker: whatever came before it is the reply (usually nothing:
//! [`Reply::Silent`]). [`TcpClient::send_raw`] does the same for arbitrary bytes, for
//! byte-level comparisons with the simulator.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use mcsim::codec::{read_reply, request_bytes};
use mcsim::memcache::{McError, Transport};
use mcsim::protocol::{MetaCode, MetaCommand, Reply, Request};

/// The marker `mn` makes the server write.
const MN: &[u8] = b"MN\r\n";

/// How a raw exchange ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawEnd {
    /// The `MN` marker arrived (it is not part of the bytes).
    Marker,
    /// The server closed the connection.
    Closed,
    /// Nothing more arrived within the read timeout.
    TimedOut,
}

/// What a raw exchange read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raw {
    /// Every byte the server wrote (without the final `MN` marker).
    pub bytes: Vec<u8>,
    /// Why reading stopped.
    pub end: RawEnd,
}

/// A blocking client for one memcached connection.
#[derive(Debug)]
pub struct TcpClient {
    stream: TcpStream,
    buf: Vec<u8>,
    closed: bool,
}

/// The no-op request that marks the end of a batch.
fn noop() -> Request {
    Request::Meta {
        command: MetaCommand::Noop,
        key: None,
        flags: vec![],
        data: None,
    }
}

fn is_noop(reply: &Reply) -> bool {
    matches!(reply, Reply::Meta(m) if m.code == MetaCode::Noop)
}

fn io_error(e: std::io::Error) -> McError {
    match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => McError::Transport(Transport::TimedOut),
        _ => McError::Transport(Transport::ServerDown),
    }
}

impl TcpClient {
    /// How long a read waits before the call times out, unless changed.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

    /// Connects to `addr` (no delay, [`TcpClient::DEFAULT_TIMEOUT`] for reads).
    pub fn connect(addr: impl ToSocketAddrs) -> Result<TcpClient, McError> {
        let addrs: Vec<SocketAddr> = addr
            .to_socket_addrs()
            .map_err(|_| McError::Transport(Transport::ServerDown))?
            .collect();
        let mut last = McError::Transport(Transport::ServerDown);
        for a in addrs {
            match TcpStream::connect_timeout(&a, Self::DEFAULT_TIMEOUT) {
                Ok(stream) => {
                    stream.set_nodelay(true).map_err(io_error)?;
                    stream
                        .set_read_timeout(Some(Self::DEFAULT_TIMEOUT))
                        .map_err(io_error)?;
                    return Ok(TcpClient {
                        stream,
                        buf: Vec::new(),
                        closed: false,
                    });
                }
                Err(e) => last = io_error(e),
            }
        }
        Err(last)
    }

    /// Changes how long a read may wait.
    pub fn set_timeout(&mut self, timeout: Duration) -> Result<(), McError> {
        self.stream
            .set_read_timeout(Some(timeout.max(Duration::from_millis(1))))
            .map_err(io_error)
    }

    /// True once the server closed the connection.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Sends `request` and reads its reply. Error replies (`ERROR`, `CLIENT_ERROR`, …) are
    /// replies; `Err` means the transport failed or the bytes made no sense.
    pub fn call(&mut self, request: &Request) -> Result<Reply, McError> {
        let mut bytes = request_bytes(request);
        let marked = request.is_noreply();
        if marked {
            bytes.extend_from_slice(b"mn\r\n");
        }
        self.write_all(&bytes)?;
        if !marked {
            return self.read_with(|buf| read_reply(buf, request));
        }
        let expect = if matches!(request, Request::Meta { .. }) {
            request.clone()
        } else {
            noop()
        };
        let first = self.read_with(|buf| read_reply(buf, &expect))?;
        if is_noop(&first) {
            return Ok(Reply::Silent);
        }
        let marker = self.read_with(|buf| read_reply(buf, &noop()))?;
        if !is_noop(&marker) {
            return Err(McError::Unexpected(format!(
                "expected MN after the reply, got {marker:?}"
            )));
        }
        Ok(first)
    }

    /// Sends `bytes` followed by `mn\r\n` and reads everything up to the `MN` marker.
    ///
    /// The marker is recognised at the end of what has arrived, so a value that itself
    /// ends in `MN\r\n` can stop the read early; [`TcpClient::send_raw_at_least`] guards
    /// against that when the expected length is known.
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<Raw, McError> {
        self.send_raw_at_least(bytes, 0)
    }

    /// [`TcpClient::send_raw`], reading at least `min_len` bytes before the marker.
    pub fn send_raw_at_least(&mut self, bytes: &[u8], min_len: usize) -> Result<Raw, McError> {
        let mut out = bytes.to_vec();
        out.extend_from_slice(b"mn\r\n");
        self.write_all(&out)?;
        loop {
            if self.buf.len() >= min_len + MN.len() && self.buf.ends_with(MN) {
                let mut bytes = std::mem::take(&mut self.buf);
                bytes.truncate(bytes.len() - MN.len());
                return Ok(Raw {
                    bytes,
                    end: RawEnd::Marker,
                });
            }
            if let Some(end) = self.fill_raw()? {
                return Ok(Raw {
                    bytes: std::mem::take(&mut self.buf),
                    end,
                });
            }
        }
    }

    /// Sends `bytes` and reads until the server closes the connection.
    pub fn send_raw_until_close(&mut self, bytes: &[u8]) -> Result<Raw, McError> {
        self.write_all(bytes)?;
        loop {
            if let Some(end) = self.fill_raw()? {
                return Ok(Raw {
                    bytes: std::mem::take(&mut self.buf),
                    end,
                });
            }
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), McError> {
        if self.closed {
            return Err(McError::Transport(Transport::ServerDown));
        }
        self.stream.write_all(bytes).map_err(io_error)
    }

    /// Reads once into the buffer. `Some(end)` when reading is over.
    fn fill_raw(&mut self) -> Result<Option<RawEnd>, McError> {
        if self.closed {
            return Ok(Some(RawEnd::Closed));
        }
        let mut chunk = vec![0u8; 64 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) => {
                self.closed = true;
                Ok(Some(RawEnd::Closed))
            }
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(None)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => Ok(None),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                Ok(Some(RawEnd::TimedOut))
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
                ) =>
            {
                self.closed = true;
                Ok(Some(RawEnd::Closed))
            }
            Err(e) => Err(io_error(e)),
        }
    }

    /// Reads until `parse` finds a complete reply in the buffer.
    fn read_with(
        &mut self,
        parse: impl Fn(&[u8]) -> Result<Option<(Reply, usize)>, McError>,
    ) -> Result<Reply, McError> {
        loop {
            if let Some((reply, used)) = parse(&self.buf)? {
                self.buf.drain(..used);
                return Ok(reply);
            }
            match self.fill_raw()? {
                None => {}
                Some(RawEnd::TimedOut) => return Err(McError::Transport(Transport::TimedOut)),
                Some(_) => return Err(McError::Transport(Transport::ServerDown)),
            }
        }
    }
}
