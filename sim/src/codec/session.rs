//! One client connection to a simulated server, at the byte level.
//!
//! [`Session::feed`] delivers whatever bytes the client sent and returns every byte the
//! server has written back by the time it waits for more, exactly as memcached 1.6.18 does
//! on one connection: partial input is kept for the next call, a storage command waits for
//! its data block, rejected data blocks are discarded, `noreply` suppresses every reply of
//! its command (errors included), and the connection closes on `quit`, on an HTTP request
//! line and on a command line longer than 2048 bytes without a newline.
//!
//! When replies are written matters, because two events discard the replies memcached has
//! produced but not yet written: a retrieval with an over-long key and a dropped
//! connection. So the session follows memcached's connection state machine: input reaches
//! a 16 KiB read buffer (a data block beyond it is read directly), and pending replies are
//! written when the read buffer runs empty or holds only part of a line, after every
//! successful retrieval, after `mn`, and after 20 commands of one read (21 for the first
//! batch after a read). A session's `feed` stands for bytes that all arrived before the
//! server read them.

use crate::clock::VirtualTime;
use crate::codec::binary;
use crate::codec::gate::{self, Admit, Control, Fixed, Gate, Pending, Ran};
use crate::codec::read_request::{Command, MAX_PENDING_LINE, Parsed, StoreHead, parse_command};
use crate::codec::write_reply::write_reply;
use crate::protocol::{MetaCommand, Request};
use crate::server::{Server, item_total};

/// The answer to a command outside the model.
pub const UNSUPPORTED: &[u8] = b"SERVER_ERROR not supported by the simulator\r\n";

/// memcached's read buffer (`READ_BUFFER_SIZE`).
const READ_BUFFER: usize = 16 * 1024;

/// memcached's `-R` default: commands handled per read event before pending replies are
/// written and the connection yields.
const REQS_PER_EVENT: i32 = 20;

/// True if the item of storage command `head` can fit under the server's `-I`.
fn fits(head: &StoreHead, gate: &mut dyn Gate) -> bool {
    item_total(head.key().len(), head.client_flags(), head.len) <= u64::from(gate.item_size_max())
}

/// What the connection is doing with the next input bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Reading a command line.
    Command,
    /// Reading the data block of a storage command.
    Data(StoreHead),
    /// Discarding this many bytes.
    Swallow(usize),
}

/// A byte-level connection to a simulated [`Server`].
#[derive(Debug, Clone)]
pub struct Session {
    /// Received and not yet used; the first `window` bytes are in the read buffer.
    input: Vec<u8>,
    window: usize,
    /// The read buffer was enlarged for a long multi-get line.
    big_buffer: bool,
    state: State,
    /// Replies produced but not yet written.
    unsent: Vec<u8>,
    /// Commands left in this read event.
    nreqs: i32,
    closed: bool,
    /// The connection speaks the binary protocol (decided by its first byte).
    binary: Option<bool>,
    /// Bytes at the start of the read buffer known to hold no newline: a long line is
    /// looked through once, not again at every read.
    scanned: usize,
}

impl Default for Session {
    fn default() -> Session {
        Session::new()
    }
}

impl Session {
    /// A new connection.
    pub fn new() -> Session {
        Session {
            input: Vec::new(),
            window: 0,
            big_buffer: false,
            state: State::Command,
            unsent: Vec::new(),
            nreqs: REQS_PER_EVENT,
            closed: false,
            binary: None,
            scanned: 0,
        }
    }

    /// True once the server has closed the connection; later input is ignored.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Bytes received but not yet used (an incomplete line or data block).
    pub fn pending(&self) -> usize {
        self.input.len()
    }

    /// True if the connection waits for a new command line with nothing buffered and
    /// nothing left to write.
    pub fn is_idle(&self) -> bool {
        self.state == State::Command && self.input.is_empty() && self.unsent.is_empty()
    }

    /// Delivers `input` to the server at `now` and returns the bytes it writes back.
    pub fn feed(&mut self, server: &mut Server, input: &[u8], now: VirtualTime) -> Vec<u8> {
        self.feed_gated(input, &mut Fixed { server, now })
    }

    /// Delivers `input` (one read from the client) and returns the bytes written back,
    /// with `gate` around each command: it may take a line as its own control command,
    /// gives the server and the time for each command, and sees each command's reply (and
    /// may drop it). The session alone frames the input, as [`feed`](Session::feed) does.
    pub fn feed_gated(&mut self, input: &[u8], gate: &mut dyn Gate) -> Vec<u8> {
        let mut written = Vec::new();
        self.feed_into(input, gate, &mut written);
        written
    }

    /// [`feed_gated`](Session::feed_gated), appending what is written back to `written`
    /// (a buffer the caller keeps from read to read).
    pub fn feed_into(&mut self, input: &[u8], gate: &mut dyn Gate, written: &mut Vec<u8>) {
        if self.closed {
            return;
        }
        self.input.extend_from_slice(input);
        if self.binary.is_none() && !self.input.is_empty() {
            // memcached picks the protocol by the connection's first byte.
            self.binary = Some(self.input[0] == binary::REQUEST_MAGIC);
        }
        if self.binary == Some(true) {
            self.feed_binary(gate, written);
            return;
        }
        let mut pos = 0;
        while !self.closed {
            match &mut self.state {
                State::Swallow(_) => {
                    if !self.swallow(&mut pos, written) {
                        break;
                    }
                }
                State::Data(head) => {
                    let need = head.len + 2;
                    if self.input.len() - pos < need {
                        break;
                    }
                    let block = &self.input[pos..pos + need];
                    let data = block.ends_with(b"\r\n").then(|| block[..need - 2].to_vec());
                    pos += need;
                    self.window = self.window.saturating_sub(need);
                    let State::Data(head) = std::mem::replace(&mut self.state, State::Command)
                    else {
                        unreachable!("state checked above");
                    };
                    let pending = Pending::of(std::slice::from_ref(head.key()), false);
                    let Admit::Run(server, now) = gate.admit(pending) else {
                        self.drop_connection();
                        break;
                    };
                    match data {
                        Some(data) => {
                            let request = head.into_request(data);
                            let reply = server.apply(&request, now);
                            if gate.ran(Ran::Request(&request, &reply)) {
                                write_reply(&reply, &mut self.unsent);
                            }
                        }
                        None => {
                            let answer: &[u8] = if head.noreply() {
                                b""
                            } else {
                                b"CLIENT_ERROR bad data chunk\r\n"
                            };
                            let what = b"(a data block not ending in \\r\\n)";
                            if gate.ran(Ran::Line(what, answer)) {
                                self.unsent.extend_from_slice(answer);
                            }
                        }
                    }
                    self.command_done(written);
                }
                State::Command => {
                    let window = &self.input[pos..pos + self.window];
                    let from = self.scanned.min(window.len());
                    let Some(end) = window[from..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map(|i| from + i)
                    else {
                        // No whole line yet.
                        self.scanned = window.len();
                        if self.window > MAX_PENDING_LINE && !self.big_buffer {
                            // Past the limit: memcached closes, unless it is a long
                            // multi-get, for which it enlarges the read buffer.
                            if parse_command(window) == Parsed::Close {
                                self.drop_connection();
                                continue;
                            }
                            self.big_buffer = true;
                        }
                        self.flush(written);
                        if !self.read_more(pos) {
                            break;
                        }
                        continue;
                    };
                    self.scanned = 0;
                    if let Some(control) = gate.control(&window[..=end]) {
                        pos += end + 1;
                        self.window -= end + 1;
                        match control {
                            Control::Reply(bytes) => self.unsent.extend_from_slice(&bytes),
                            Control::Close => self.drop_connection(),
                        }
                        if !self.closed {
                            self.command_done(written);
                        }
                        continue;
                    }
                    match parse_command(window) {
                        Parsed::Incomplete => {
                            if self.window > MAX_PENDING_LINE {
                                // A long multi-get: memcached enlarges the read buffer.
                                self.big_buffer = true;
                            }
                            self.flush(written);
                            if !self.read_more(pos) {
                                break;
                            }
                        }
                        Parsed::Close => self.drop_connection(),
                        Parsed::Line { consumed, command } => {
                            let command = match command {
                                // It runs when its data block is in.
                                Command::Store(head) if fits(&head, gate) => {
                                    pos += consumed;
                                    self.window -= consumed;
                                    self.state = State::Data(head);
                                    continue;
                                }
                                other => other,
                            };
                            // The line itself, for the gate, where no request describes it.
                            let line = match command {
                                Command::Execute(_) => Vec::new(),
                                _ => window[..consumed].to_vec(),
                            };
                            pos += consumed;
                            self.window -= consumed;
                            self.run(command, &line, gate, written);
                            if self.state == State::Command && !self.closed {
                                self.command_done(written);
                            }
                        }
                    }
                }
            }
        }
        self.used(pos);
    }

    /// The binary protocol: whole packets run one at a time, with memcached's read buffer
    /// deciding when replies are written, as for the text protocol: a packet's header,
    /// extras and key are read into the buffer, a value beyond it straight from the
    /// socket; replies go out when a command ends with the buffer empty, when it must
    /// wait for the rest of a packet, after 20 commands of one read, and at once for
    /// errors and `NOOP`.
    fn feed_binary(&mut self, gate: &mut dyn Gate, written: &mut Vec<u8>) {
        let mut pos = 0;
        while !self.closed {
            if let State::Swallow(_) = self.state {
                if !self.swallow(&mut pos, written) {
                    break;
                }
                continue;
            }
            if !binary::head_is_in(&self.input[pos..pos + self.window]) {
                // Waiting for the rest of a packet's head, memcached writes what is
                // pending.
                if self.window > 0 {
                    self.flush(written);
                }
                if self.read_more(pos) {
                    continue;
                }
                break;
            }
            let (packet, consumed) = match binary::frame(&self.input[pos..]) {
                // The value is still on its way.
                binary::Framed::Incomplete => break,
                binary::Framed::BadMagic => {
                    // Dropped at once, replies not yet written included.
                    self.drop_connection();
                    break;
                }
                binary::Framed::Packet(packet, consumed) => (packet, consumed),
            };
            pos += consumed;
            self.window = self.window.saturating_sub(consumed);
            let (done, keep) = if binary::read_key(&packet).is_some_and(|key| gate.names(key)) {
                // A read that names the connection: answered as a miss.
                let mut empty = Server::with_defaults();
                (
                    binary::execute(&packet, &mut empty, VirtualTime::ZERO),
                    true,
                )
            } else {
                let pending = Pending::of_bytes(&packet.key, binary::inert(&packet));
                let Admit::Run(server, now) = gate.admit(pending) else {
                    self.drop_connection();
                    break;
                };
                let done = binary::execute(&packet, server, now);
                let keep = match &done.request {
                    Some(request) => gate.ran(Ran::Request(request, &done.reply)),
                    None => gate.ran(Ran::Line(
                        binary::describe_packet(&packet).as_bytes(),
                        binary::describe_response(&done.response).as_bytes(),
                    )),
                };
                (done, keep)
            };
            if keep {
                self.unsent.extend_from_slice(&done.response);
                if done.write_now {
                    self.flush(written);
                }
            }
            if done.close {
                self.flush(written);
                self.closed = true;
            } else if done.swallow > 0 {
                self.state = State::Swallow(done.swallow);
            } else {
                self.command_done(written);
            }
        }
        self.used(pos);
    }

    /// The first `pos` bytes of the input are used: they go (all of it, once closed).
    fn used(&mut self, pos: usize) {
        if self.closed {
            self.input.clear();
            self.window = 0;
        } else {
            self.input.drain(..pos);
        }
    }

    /// Discards what is left to discard from `pos` on; true once all of it is gone (the
    /// discarding counts as the command that asked for it).
    fn swallow(&mut self, pos: &mut usize, written: &mut Vec<u8>) -> bool {
        let State::Swallow(left) = &mut self.state else {
            return true;
        };
        let take = (*left).min(self.input.len() - *pos);
        *pos += take;
        self.window = self.window.saturating_sub(take);
        *left -= take;
        if *left > 0 {
            return false;
        }
        self.state = State::Command;
        self.command_done(written);
        true
    }

    /// Pending replies go out.
    fn flush(&mut self, written: &mut Vec<u8>) {
        written.append(&mut self.unsent);
    }

    /// memcached reads what has arrived into its read buffer. False if nothing new is there.
    fn read_more(&mut self, pos: usize) -> bool {
        let available = self.input.len() - pos - self.window;
        if self.window == 0 {
            // An empty read buffer is given back, and a fresh one has the default size.
            self.big_buffer = false;
        }
        let room = if self.big_buffer {
            available
        } else {
            READ_BUFFER.saturating_sub(self.window)
        };
        let take = available.min(room);
        if take == 0 {
            return false;
        }
        self.window += take;
        self.nreqs = REQS_PER_EVENT;
        true
    }

    /// After each command: count it against this read event, and write pending replies
    /// when the event is used up or the read buffer is empty.
    fn command_done(&mut self, written: &mut Vec<u8>) {
        self.nreqs -= 1;
        if self.nreqs < 0 {
            self.flush(written);
            // The connection yields; when it resumes, that resumption counts once.
            self.nreqs = REQS_PER_EVENT - 1;
        } else if self.window == 0 {
            self.flush(written);
        }
    }

    /// memcached closes without writing what is still pending.
    fn drop_connection(&mut self) {
        self.unsent.clear();
        self.closed = true;
    }

    /// Runs a command whose line is all there is to it (a storage command here is one
    /// whose item cannot fit, answered before its block).
    fn run(&mut self, command: Command, line: &[u8], gate: &mut dyn Gate, written: &mut Vec<u8>) {
        if let Command::Execute(request) = &command
            && let Some(key) = read_of_one_key(request)
            && gate.names(key.as_bytes())
        {
            // A read that names the connection: answered as a miss, at once as a read is.
            let miss = Server::with_defaults().apply(request, VirtualTime::ZERO);
            write_reply(&miss, &mut self.unsent);
            self.flush(written);
            return;
        }
        let pending = match &command {
            Command::Execute(request) => {
                Pending::of(request.keys(), gate::inert(request)).read_only(request.is_read_only())
            }
            Command::Quit => Pending::of(&[], true),
            _ => Pending::of(&[], false),
        };
        let Admit::Run(server, now) = gate.admit(pending) else {
            self.drop_connection();
            return;
        };
        let start = self.unsent.len();
        let keep = match command {
            Command::Execute(request) => {
                let reply = server.apply(&request, now);
                if gate.ran(Ran::Request(&request, &reply)) {
                    write_reply(&reply, &mut self.unsent);
                }
                let writes_now = matches!(
                    request,
                    Request::Get { .. }
                        | Request::Gat { .. }
                        | Request::Meta {
                            command: MetaCommand::Noop,
                            ..
                        }
                );
                if writes_now {
                    self.flush(written);
                }
                return;
            }
            Command::Store(head) => {
                // Its item cannot fit: memcached fails the allocation before reading the
                // block, answers, and discards the block unread.
                let reply = server.reject_too_large(head.key(), head.unlinks_on_failure(), now);
                if !head.noreply() {
                    write_reply(&reply, &mut self.unsent);
                }
                self.state = State::Swallow(head.len + 2);
                gate.ran(Ran::Line(line, &self.unsent[start..]))
            }
            Command::FailedRetrieval { request, answer } => {
                if let Some(request) = request {
                    server.apply(&request, now);
                }
                // Every reply not yet written goes, this one's included.
                self.unsent.clear();
                if gate.ran(Ran::Line(line, &answer)) {
                    self.unsent.extend_from_slice(&answer);
                }
                return;
            }
            Command::Answer {
                bytes,
                noreply,
                swallow,
            } => {
                if !noreply {
                    self.unsent.extend_from_slice(&bytes);
                }
                if swallow > 0 {
                    self.state = State::Swallow(swallow);
                }
                gate.ran(Ran::Line(line, &self.unsent[start..]))
            }
            Command::Quit => {
                gate.ran(Ran::Line(line, b""));
                self.flush(written);
                self.closed = true;
                return;
            }
            Command::Close => {
                gate.ran(Ran::Line(line, b""));
                self.drop_connection();
                return;
            }
            Command::Unsupported { swallow, .. } => {
                self.unsent.extend_from_slice(UNSUPPORTED);
                if swallow > 0 {
                    self.state = State::Swallow(swallow);
                }
                gate.ran(Ran::Line(line, &self.unsent[start..]))
            }
        };
        if !keep {
            self.unsent.truncate(start);
        }
    }
}

/// The key of a read of one key (`get`, `gets`, `gat`, `gats`, `mg`): a read that may
/// name the connection ([`Gate::names`]).
fn read_of_one_key(request: &Request) -> Option<&crate::memcache::Key> {
    match request {
        Request::Get { keys, .. } | Request::Gat { keys, .. } if keys.len() == 1 => keys.first(),
        Request::Meta {
            command: MetaCommand::Get,
            key,
            ..
        } => key.as_ref(),
        _ => None,
    }
}
