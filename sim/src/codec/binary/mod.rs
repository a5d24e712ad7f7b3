//! memcached's binary protocol, server side: what memcached 1.6.18 answers to each
//! request packet, on the same simulated [`Server`] the text protocol uses.
//!
//! A connection speaks it when its first byte is the request magic `0x80`, as memcached
//! decides. Each packet is a 24-byte header (magic, opcode, key length, extras length,
//! data type, vbucket, body length, opaque, cas), then extras, key and value. A packet is
//! executed as the text command it stands for (`GET` as `get`, `SET` with a cas as `cas`,
//! …), so statistics, expiry, evictions and faults are the text protocol's; the answer is
//! written as memcached writes it: the response magic `0x81`, the opcode and opaque
//! echoed, a status, the cas of the item where there is one, and memcached's error
//! strings. Quiet opcodes (`GETQ`, `SETQ`, …) answer only errors (`GETQ` not even a
//! miss). A header memcached rejects (wrong extras or key length for its opcode, a key
//! over 250 bytes, a wrong magic) gets `Invalid arguments` and the connection closes, as
//! memcached closes it; an unknown opcode gets `Unknown command` and its body is skipped.
//!
//! Not covered: SASL, and keys holding spaces or control bytes (which only the binary
//! protocol can carry; they are answered `Invalid arguments`).

use crate::clock::VirtualTime;
use crate::memcache::{Exptime, Key, MAX_KEY_LEN};
use crate::protocol::{Reply, Request, StatsGroup};
use crate::server::Server;

mod keyed;
use keyed::keyed;

/// The first byte of every request packet.
pub const REQUEST_MAGIC: u8 = 0x80;
const RESPONSE_MAGIC: u8 = 0x81;
/// Bytes of a packet header.
pub const HEADER: usize = 24;

mod op {
    pub const GET: u8 = 0x00;
    pub const SET: u8 = 0x01;
    pub const ADD: u8 = 0x02;
    pub const REPLACE: u8 = 0x03;
    pub const DELETE: u8 = 0x04;
    pub const INCREMENT: u8 = 0x05;
    pub const DECREMENT: u8 = 0x06;
    pub const QUIT: u8 = 0x07;
    pub const FLUSH: u8 = 0x08;
    pub const GETQ: u8 = 0x09;
    pub const NOOP: u8 = 0x0a;
    pub const VERSION: u8 = 0x0b;
    pub const GETK: u8 = 0x0c;
    pub const GETKQ: u8 = 0x0d;
    pub const APPEND: u8 = 0x0e;
    pub const PREPEND: u8 = 0x0f;
    pub const STAT: u8 = 0x10;
    pub const SETQ: u8 = 0x11;
    pub const ADDQ: u8 = 0x12;
    pub const REPLACEQ: u8 = 0x13;
    pub const DELETEQ: u8 = 0x14;
    pub const INCREMENTQ: u8 = 0x15;
    pub const DECREMENTQ: u8 = 0x16;
    pub const QUITQ: u8 = 0x17;
    pub const FLUSHQ: u8 = 0x18;
    pub const APPENDQ: u8 = 0x19;
    pub const PREPENDQ: u8 = 0x1a;
    pub const TOUCH: u8 = 0x1c;
    pub const GAT: u8 = 0x1d;
    pub const GATQ: u8 = 0x1e;
    pub const GATK: u8 = 0x23;
    pub const GATKQ: u8 = 0x24;
}

mod status {
    pub const SUCCESS: u16 = 0x00;
    pub const KEY_ENOENT: u16 = 0x01;
    pub const KEY_EEXISTS: u16 = 0x02;
    pub const E2BIG: u16 = 0x03;
    pub const EINVAL: u16 = 0x04;
    pub const NOT_STORED: u16 = 0x05;
    pub const DELTA_BADVAL: u16 = 0x06;
    pub const UNKNOWN_COMMAND: u16 = 0x81;
    pub const ENOMEM: u16 = 0x82;
}

/// memcached's text for an error status.
fn error_text(status: u16) -> &'static [u8] {
    match status {
        status::ENOMEM => b"Out of memory",
        status::UNKNOWN_COMMAND => b"Unknown command",
        status::KEY_ENOENT => b"Not found",
        status::EINVAL => b"Invalid arguments",
        status::KEY_EEXISTS => b"Data exists for key.",
        status::E2BIG => b"Too large.",
        status::DELTA_BADVAL => b"Non-numeric server-side value for incr or decr",
        status::NOT_STORED => b"Not stored.",
        _ => b"UNHANDLED ERROR",
    }
}

/// One request packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// What it asks.
    pub opcode: u8,
    /// Echoed in the response.
    pub opaque: u32,
    /// The cas the client gave (0: none).
    pub cas: u64,
    /// Command-specific extras.
    pub extras: Vec<u8>,
    /// The key.
    pub key: Vec<u8>,
    /// The value.
    pub value: Vec<u8>,
    /// Body length the header announced.
    pub body_len: usize,
}

/// What the start of a binary connection's input holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Framed {
    /// Not a whole packet yet.
    Incomplete,
    /// A header without the request magic: memcached drops the connection as soon as
    /// it has the header, without waiting for a body.
    BadMagic,
    /// A whole packet, and the bytes it took.
    Packet(Packet, usize),
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// A binary exptime as the text protocol's: memcached reads it unsigned here, so one
/// past `i32::MAX` is an absolute time far ahead, not a negative one (the text protocol
/// reads it signed); clamped, it stays far ahead.
fn exptime(raw: u32) -> Exptime {
    Exptime(i64::from(raw.min(i32::MAX as u32)))
}

/// True if `input` holds what memcached reads of a packet into its read buffer before
/// running it: the header, and unless its magic is wrong, the extras and key (the value
/// may still be on its way).
pub fn head_is_in(input: &[u8]) -> bool {
    if input.len() < HEADER {
        return false;
    }
    input[0] != REQUEST_MAGIC || input.len() >= HEADER + extras_and_key(input).1
}

/// The extras' length and the extras' and key's together, from a whole header.
fn extras_and_key(header: &[u8]) -> (usize, usize) {
    let extras = usize::from(header[4]);
    (extras, extras + usize::from(be16(&header[2..4])))
}

/// Frames one packet from `input` (whose first byte is a packet's first byte).
pub fn frame(input: &[u8]) -> Framed {
    if input.len() < HEADER {
        return Framed::Incomplete;
    }
    if input[0] != REQUEST_MAGIC {
        return Framed::BadMagic;
    }
    let (extras_len, head_len) = extras_and_key(input);
    let body_len = be32(&input[8..12]) as usize;
    let Some(total) = HEADER.checked_add(body_len) else {
        return Framed::Incomplete;
    };
    if input.len() < total {
        return Framed::Incomplete;
    }
    let body = &input[HEADER..total];
    let extras = &body[..extras_len.min(body.len())];
    let key = &body[extras.len()..head_len.min(body.len())];
    let value = &body[extras.len() + key.len()..];
    Framed::Packet(
        Packet {
            opcode: input[1],
            opaque: be32(&input[12..16]),
            cas: be64(&input[16..24]),
            extras: extras.to_vec(),
            key: key.to_vec(),
            value: value.to_vec(),
            body_len,
        },
        total,
    )
}

/// What a packet did: the request it ran as (for the trace), the reply the server gave,
/// the response bytes, and whether the connection closes after them.
pub struct Executed {
    /// The text request it ran as, if it reached the server.
    pub request: Option<Request>,
    /// The server's reply ([`Reply::Silent`] when it did not reach the server).
    pub reply: Reply,
    /// What goes back to the client.
    pub response: Vec<u8>,
    /// Close the connection after writing the response.
    pub close: bool,
    /// The response is an error, which memcached writes at once with everything
    /// pending; a success waits until the input runs out.
    pub write_now: bool,
    /// Bytes after the packet that memcached discards: an unknown opcode's body is
    /// skipped counting from after its extras and key, so as many bytes of what follows
    /// go with it.
    pub swallow: usize,
}

fn done(request: Option<Request>, reply: Reply, response: Vec<u8>, close: bool) -> Executed {
    // An error status (not a miss of GETK, which memcached answers as a response).
    let write_now = response.len() >= HEADER
        && response[6..8] != [0, 0]
        && u16::from_be_bytes([response[2], response[3]]) == 0;
    Executed {
        request,
        reply,
        response,
        close,
        write_now,
        swallow: 0,
    }
}

/// Appends a response header and body.
fn respond(
    out: &mut Vec<u8>,
    p: &Packet,
    status: u16,
    extras: &[u8],
    key: &[u8],
    value: &[u8],
    cas: u64,
) {
    out.push(RESPONSE_MAGIC);
    out.push(p.opcode);
    out.extend_from_slice(&(key.len() as u16).to_be_bytes());
    out.push(extras.len() as u8);
    out.push(0);
    out.extend_from_slice(&status.to_be_bytes());
    let body = extras.len() + key.len() + value.len();
    out.extend_from_slice(&(body as u32).to_be_bytes());
    out.extend_from_slice(&p.opaque.to_be_bytes());
    out.extend_from_slice(&cas.to_be_bytes());
    out.extend_from_slice(extras);
    out.extend_from_slice(key);
    out.extend_from_slice(value);
}

fn error(out: &mut Vec<u8>, p: &Packet, status: u16) {
    respond(out, p, status, &[], &[], error_text(status), 0);
}

/// The key of a well-formed read of one key (a GET or GAT of any kind): a read that may
/// name the connection ([`crate::codec::gate::Gate::names`]).
pub fn read_key(p: &Packet) -> Option<&[u8]> {
    let read = matches!(
        p.opcode,
        op::GET | op::GETQ | op::GETK | op::GETKQ | op::GAT | op::GATQ | op::GATK | op::GATKQ
    );
    (read && p.key.len() <= MAX_KEY_LEN && well_formed(p)).then_some(p.key.as_slice())
}

/// A packet that ran as no text request, for a trace: `(binary QUIT)`, or its opcode
/// in hex when it has no name.
pub fn describe_packet(p: &Packet) -> String {
    let name = match p.opcode {
        op::QUIT => "QUIT",
        op::QUITQ => "QUITQ",
        op::NOOP => "NOOP",
        op::VERSION => "VERSION",
        op::STAT => "STAT",
        op::FLUSH => "FLUSH",
        op::FLUSHQ => "FLUSHQ",
        other => return format!("(binary opcode {other:#04x})"),
    };
    format!("(binary {name})")
}

/// A response's status, for a trace (empty when nothing was sent): `Success`, or the
/// error's text, as memcached writes it in the body.
pub fn describe_response(response: &[u8]) -> String {
    if response.len() < HEADER {
        return String::new();
    }
    match be16(&response[6..8]) {
        status::SUCCESS => "(binary) Success".to_string(),
        s => format!("(binary) {}", String::from_utf8_lossy(error_text(s))),
    }
}

/// True for the opcodes that answer only errors.
fn quiet(opcode: u8) -> bool {
    matches!(
        opcode,
        op::GETQ
            | op::GETKQ
            | op::SETQ
            | op::ADDQ
            | op::REPLACEQ
            | op::DELETEQ
            | op::INCREMENTQ
            | op::DECREMENTQ
            | op::QUITQ
            | op::FLUSHQ
            | op::APPENDQ
            | op::PREPENDQ
            | op::GATQ
            | op::GATKQ
    )
}

/// True if the header's lengths are what memcached requires of the opcode (the key's
/// own limit is checked before).
fn well_formed(p: &Packet) -> bool {
    let (e, k, b) = (p.extras.len(), p.key.len(), p.body_len);
    match p.opcode {
        op::VERSION | op::QUIT | op::QUITQ | op::NOOP => e == 0 && k == 0 && b == 0,
        op::FLUSH | op::FLUSHQ => (e == 0 || e == 4) && k == 0 && b == e,
        op::SET | op::SETQ | op::ADD | op::ADDQ | op::REPLACE | op::REPLACEQ => {
            e == 8 && k != 0 && b >= k + 8
        }
        op::GET | op::GETQ | op::GETK | op::GETKQ => e == 0 && k > 0 && b == k,
        op::DELETE | op::DELETEQ => e == 0 && k > 0 && b == k,
        op::INCREMENT | op::INCREMENTQ | op::DECREMENT | op::DECREMENTQ => {
            e == 20 && k > 0 && b == k + 20
        }
        op::APPEND | op::APPENDQ | op::PREPEND | op::PREPENDQ => e == 0 && k > 0,
        op::STAT => e == 0,
        op::TOUCH | op::GAT | op::GATQ | op::GATK | op::GATKQ => e == 4 && k != 0 && b == k + 4,
        _ => true,
    }
}

/// True if `p` changes nothing another connection could observe: a QUIT, QUITQ, NOOP or
/// VERSION ([`gate::inert`](crate::codec::gate::inert) for the text protocol).
pub fn inert(p: &Packet) -> bool {
    matches!(p.opcode, op::QUIT | op::QUITQ | op::NOOP | op::VERSION)
}

/// Runs `p` on `server` at `now`, as memcached 1.6.18 does.
pub fn execute(p: &Packet, server: &mut Server, now: VirtualTime) -> Executed {
    let mut out = Vec::new();
    let known = matches!(
        p.opcode,
        0x00..=0x1a | op::TOUCH | op::GAT | op::GATQ | op::GATK | op::GATKQ
    );
    if p.key.len() > MAX_KEY_LEN {
        // Checked before the opcode is looked at.
        error(&mut out, p, status::EINVAL);
        return done(None, Reply::Silent, out, true);
    }
    if !known {
        error(&mut out, p, status::UNKNOWN_COMMAND);
        // memcached skips the body without writing what is pending first.
        return Executed {
            swallow: p.extras.len() + p.key.len(),
            write_now: p.body_len == 0,
            ..done(None, Reply::Silent, out, false)
        };
    }
    if !well_formed(p) {
        error(&mut out, p, status::EINVAL);
        return done(None, Reply::Silent, out, true);
    }
    let quiet = quiet(p.opcode);
    match p.opcode {
        op::NOOP => {
            respond(&mut out, p, status::SUCCESS, &[], &[], &[], 0);
            // A noop ends a pipeline: everything pending is written with it.
            Executed {
                write_now: true,
                ..done(None, Reply::Ok, out, false)
            }
        }
        op::QUIT | op::QUITQ => {
            if !quiet {
                respond(&mut out, p, status::SUCCESS, &[], &[], &[], 0);
            }
            done(None, Reply::Ok, out, true)
        }
        op::VERSION => {
            let request = Request::Version;
            let reply = server.apply(&request, now);
            let version = match &reply {
                Reply::Version(v) => v.clone(),
                _ => server.config().version.clone(),
            };
            respond(
                &mut out,
                p,
                status::SUCCESS,
                &[],
                &[],
                version.as_bytes(),
                0,
            );
            done(Some(request), reply, out, false)
        }
        op::FLUSH | op::FLUSHQ => {
            let delay = (p.extras.len() == 4).then(|| exptime(be32(&p.extras)).0);
            let request = Request::FlushAll {
                delay: delay.filter(|d| *d != 0),
                noreply: false,
            };
            let reply = server.apply(&request, now);
            if !quiet {
                respond(&mut out, p, status::SUCCESS, &[], &[], &[], 0);
            }
            done(Some(request), reply, out, false)
        }
        op::STAT => {
            // As memcached 1.6.18 matches the group: `settings` as a prefix, the others
            // whole.
            let request = match &p.key[..] {
                [] => Request::Stats,
                b"items" => Request::StatsGroup(StatsGroup::Items),
                k if k.starts_with(b"reset") => Request::StatsReset,
                b"slabs" => Request::StatsGroup(StatsGroup::Slabs),
                k if k.starts_with(b"settings") => Request::StatsGroup(StatsGroup::Settings),
                _ => {
                    error(&mut out, p, status::KEY_ENOENT);
                    return done(None, Reply::Silent, out, false);
                }
            };
            let reply = server.apply(&request, now);
            if let Reply::Stats(lines) = &reply {
                for (name, value) in lines {
                    respond(
                        &mut out,
                        p,
                        status::SUCCESS,
                        &[],
                        name.as_bytes(),
                        value.as_bytes(),
                        0,
                    );
                }
            }
            respond(&mut out, p, status::SUCCESS, &[], &[], &[], 0);
            done(Some(request), reply, out, false)
        }
        _ => {
            let Ok(key) = Key::binary(&p.key) else {
                error(&mut out, p, status::EINVAL);
                return done(None, Reply::Silent, out, false);
            };
            keyed(p, key, quiet, server, now, &mut out)
        }
    }
}
