//! Connections served by a few event-loop workers, as memcached's worker threads serve
//! theirs, when nothing makes a connection wait for another: no lockstep and no reply
//! delay (those keep a thread per connection, which may block).
//!
//! The listener hands each accepted connection to the next worker in turn. A worker
//! waits on its connections with one `epoll` (through `mio`), reads whatever a ready
//! connection has, gives it whole to the connection's [`Session`] (the same framing,
//! gate and trace as a connection thread), and writes the replies without blocking: what
//! the socket does not take waits for it, and the connection is not read again until it
//! has, as memcached stops reading a connection whose replies back up. A connection that
//! keeps sending is read a few times and then waits its turn behind the others that are
//! ready, and a round of turns ends once it has made a megabyte of replies so that the
//! worker looks for newly ready connections: a burst of large multi-gets does not stall
//! a small `get` on the same worker.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::sync::Arc;

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token, Waker};
use parking_lot::Mutex;

use crate::Shared;
use crate::connection::{Connection, ServeGate};
use mcsim::codec::Session;

/// Reads of one connection before the worker turns to the others that are ready
/// (memcached's `-R`, requests per event, plays the same part).
const READS_PER_TURN: usize = 4;

/// Replies a worker makes in one round before it looks for newly ready connections.
const ROUND_BYTES: usize = 1 << 20;

/// The waker's token; connections use their slot's index.
const WAKE: Token = Token(usize::MAX);

/// A worker's inbox: connections accepted for it, and how to wake it.
pub(crate) struct Inbox {
    accepted: Mutex<Vec<(std::net::TcpStream, usize, u64)>>,
    waker: Waker,
}

impl Inbox {
    /// Hands the connection `stream` (to server `server`, numbered `id`) to the worker.
    pub(crate) fn give(&self, stream: std::net::TcpStream, server: usize, id: u64) {
        self.accepted.lock().push((stream, server, id));
        let _ = self.waker.wake();
    }
}

/// Starts `count` workers; each serves the connections given to its inbox.
pub(crate) fn start(shared: &Arc<Shared>, count: usize) -> std::io::Result<Vec<Arc<Inbox>>> {
    let mut inboxes = Vec::new();
    for i in 0..count.max(1) {
        let poll = Poll::new()?;
        let inbox = Arc::new(Inbox {
            accepted: Mutex::new(Vec::new()),
            waker: Waker::new(poll.registry(), WAKE)?,
        });
        let (shared, mine) = (shared.clone(), inbox.clone());
        std::thread::Builder::new()
            .name(format!("mcsim-worker-{i}"))
            .spawn(move || {
                let what = format!("worker {i}");
                let stopped =
                    crate::process::or_exit(&what, || Worker::new(poll).run(&shared, &mine));
                crate::process::exit(1, &format!("{what} stopped: {stopped}"))
            })?;
        inboxes.push(inbox);
    }
    Ok(inboxes)
}

/// One client connection on a worker.
struct Conn {
    stream: TcpStream,
    conn: Connection,
    session: Session,
    /// Replies the socket has not taken yet, from `sent` on.
    out: Vec<u8>,
    sent: usize,
    /// The peer may have sent more than was read (readiness is reported once).
    unread: bool,
    /// The session closed: the connection ends once its replies are written.
    closing: bool,
    /// It is in the worker's round or waits for a turn.
    queued: bool,
    /// The peer closed its side or the socket failed: read until the read says so.
    ended: bool,
    /// Registered for writability too: only while replies wait for room in the socket,
    /// as memcached asks for it, so that the acknowledgements of replies already
    /// taken do not wake the worker.
    writing: bool,
}

struct Worker {
    poll: Poll,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    buf: Vec<u8>,
    /// Connections waiting for a turn, longest first: input left to read once the
    /// others have had theirs, or a round that ended before them.
    waiting: VecDeque<usize>,
}

impl Worker {
    fn new(poll: Poll) -> Worker {
        Worker {
            poll,
            conns: Vec::new(),
            free: Vec::new(),
            buf: vec![0u8; super::connection::READ_CHUNK],
            waiting: VecDeque::new(),
        }
    }

    /// Serves until its poll fails; the error.
    fn run(mut self, shared: &Shared, inbox: &Inbox) -> std::io::Error {
        let mut events = Events::with_capacity(256);
        let mut round: VecDeque<usize> = VecDeque::new();
        loop {
            // Connections still waiting for a turn are served without sleeping.
            let timeout = (!self.waiting.is_empty()).then_some(std::time::Duration::ZERO);
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == ErrorKind::Interrupted {
                    continue;
                }
                return e;
            }
            // A round: the connection that has waited longest, then those just ready (a
            // small `get` is not kept behind every large reply already waiting), then
            // the others that wait, until the round has made ROUND_BYTES of replies.
            round.extend(self.waiting.pop_front());
            for event in events.iter() {
                if event.token() == WAKE {
                    self.adopt(shared, inbox);
                    continue;
                }
                let slot = event.token().0;
                if let Some(Some(c)) = self.conns.get_mut(slot) {
                    if event.is_readable() || event.is_read_closed() || event.is_error() {
                        c.unread = true;
                    }
                    if event.is_read_closed() || event.is_error() {
                        c.ended = true;
                    }
                    if !c.queued {
                        c.queued = true;
                        round.push_back(slot);
                    }
                }
            }
            round.extend(self.waiting.drain(..));
            let mut made = 0;
            while let Some(slot) = round.pop_front() {
                if made >= ROUND_BYTES {
                    self.waiting.push_back(slot);
                    self.waiting.extend(round.drain(..));
                    break;
                }
                // A panic while serving one connection ends that connection, as it ends
                // its thread without workers, not the worker's others.
                let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    self.serve(shared, slot)
                }));
                match served {
                    Ok(bytes) => made += bytes,
                    Err(_) => self.close(shared, slot),
                }
            }
        }
    }

    /// Registers the connections accepted for this worker.
    fn adopt(&mut self, shared: &Shared, inbox: &Inbox) {
        let accepted = std::mem::take(&mut *inbox.accepted.lock());
        for (stream, server, id) in accepted {
            let _ = stream.set_nodelay(true);
            if stream.set_nonblocking(true).is_err() {
                continue;
            }
            let mut stream = TcpStream::from_std(stream);
            let slot = self.free.pop().unwrap_or_else(|| {
                self.conns.push(None);
                self.conns.len() - 1
            });
            if self
                .poll
                .registry()
                .register(&mut stream, Token(slot), Interest::READABLE)
                .is_err()
            {
                self.free.push(slot);
                continue;
            }
            self.conns[slot] = Some(Conn {
                stream,
                conn: Connection::new(id, server, shared),
                session: Session::new(),
                out: Vec::new(),
                sent: 0,
                // Bytes may have arrived before the registration.
                unread: true,
                closing: false,
                queued: true,
                ended: false,
                writing: false,
            });
            self.waiting.push_back(slot);
        }
    }

    /// Writes what it can, then reads and answers while the replies are taken, a few
    /// reads at most; ends the connection when it is done. The bytes of replies made.
    fn serve(&mut self, shared: &Shared, slot: usize) -> usize {
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return 0;
        };
        c.queued = false;
        let mut made = 0;
        let mut reads = 0;
        let open = loop {
            match flush(c) {
                Err(()) => break false,
                Ok(false) => break true, // the socket is full: wait until it is writable
                Ok(true) if c.closing => break false,
                Ok(true) => {}
            }
            if !c.unread {
                break true;
            }
            if reads == READS_PER_TURN {
                c.queued = true;
                self.waiting.push_back(slot);
                break true;
            }
            reads += 1;
            let n = match c.stream.read(&mut self.buf) {
                Ok(0) => break false,
                Ok(n) => {
                    // A read that did not fill the buffer took all there was: more input
                    // makes the socket ready again, so no read is spent to hear
                    // `WouldBlock` (memcached's reads stop the same way). The end of the
                    // peer's input makes it ready only once: that is read to its end.
                    if n < self.buf.len() && !c.ended {
                        c.unread = false;
                    }
                    n
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    c.unread = false;
                    continue;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => break false,
            };
            c.conn.read(n);
            let before = c.out.len();
            let mut gate = ServeGate::new(&mut c.conn, shared);
            c.session.feed_into(&self.buf[..n], &mut gate, &mut c.out);
            drop(gate);
            c.conn.made(c.out.len() - before);
            made += c.out.len();
            c.closing = c.session.is_closed();
        };
        let full = c.sent < c.out.len();
        if open && full != c.writing {
            let interest = if full {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            c.writing = full;
            if self
                .poll
                .registry()
                .reregister(&mut c.stream, Token(slot), interest)
                .is_err()
            {
                self.close(shared, slot);
                return made;
            }
        }
        if !open {
            self.close(shared, slot);
        }
        made
    }

    fn close(&mut self, shared: &Shared, slot: usize) {
        if let Some(mut c) = self.conns[slot].take() {
            let _ = self.poll.registry().deregister(&mut c.stream);
            c.conn.close(shared);
            self.free.push(slot);
        }
    }
}

/// Writes the connection's pending replies: `Ok(true)` when all are written, `Ok(false)`
/// when the socket took what it could, `Err` when the connection is gone.
fn flush(c: &mut Conn) -> Result<bool, ()> {
    while c.sent < c.out.len() {
        match c.stream.write(&c.out[c.sent..]) {
            Ok(0) => return Err(()),
            Ok(n) => c.sent += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Err(()),
        }
    }
    c.out.clear();
    c.sent = 0;
    Ok(true)
}
