//! Byte-level cases through a Session.

#[allow(unused_imports)]
use super::*;

// ---------------------------------------------------------------------------------------
// Byte-level cases through a Session.

pub(crate) struct Conn {
    pub(crate) server: Server,
    pub(crate) session: Session,
}

impl Conn {
    pub(crate) fn new() -> Conn {
        Conn {
            server: Server::new(ServerConfig::default(), VirtualTime::ZERO),
            session: Session::new(),
        }
    }

    pub(crate) fn send(&mut self, bytes: &[u8]) -> String {
        let out = self
            .session
            .feed(&mut self.server, bytes, VirtualTime::from_secs(1));
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[test]
pub(crate) fn case_12_overlong_key() {
    let mut c = Conn::new();
    let long = "k".repeat(251);
    assert_eq!(c.send(b"set a 0 0 1\r\nx\r\n"), "STORED\r\n");
    assert_eq!(
        c.send(format!("get {long}\r\n").as_bytes()),
        "CLIENT_ERROR bad command line format\r\n"
    );
    assert_eq!(
        c.send(format!("get a {long}\r\n").as_bytes()),
        "CLIENT_ERROR bad command line format\r\n"
    );
    assert_eq!(
        c.send(format!("set {long} 0 0 1\r\nx\r\n").as_bytes()),
        "CLIENT_ERROR bad command line format\r\nERROR\r\n"
    );
    assert_eq!(
        c.send(format!("set {long} 0 0 1 noreply\r\nx\r\n").as_bytes()),
        "ERROR\r\n"
    );
    let ok = "k".repeat(250);
    assert_eq!(
        c.send(format!("set {ok} 0 0 1\r\nx\r\nget {ok}\r\n").as_bytes()),
        format!("STORED\r\nVALUE {ok} 0 1\r\nx\r\nEND\r\n")
    );
}

#[test]
pub(crate) fn case_14_bad_data_chunk() {
    let mut c = Conn::new();
    assert_eq!(
        c.send(b"set d 0 0 3\r\nabcde\r\n"),
        "CLIENT_ERROR bad data chunk\r\nERROR\r\n"
    );
    assert_eq!(c.send(b"get d\r\n"), "END\r\n");
    // The bytes after the block are the next command line.
    assert_eq!(
        c.send(b"set d 0 0 1\r\nabcget d\r\n"),
        "CLIENT_ERROR bad data chunk\r\nEND\r\n"
    );
    // noreply hides the error, not the line that follows.
    assert_eq!(c.send(b"set d 0 0 3 noreply\r\nabcde\r\n"), "ERROR\r\n");
}

#[test]
pub(crate) fn partial_input_waits() {
    let mut c = Conn::new();
    let stream = b"set k 5 0 3\r\nabc\r\nget k\r\n";
    let mut out = String::new();
    for b in stream {
        out += &c.send(&[*b]);
    }
    assert_eq!(out, "STORED\r\nVALUE k 5 3\r\nabc\r\nEND\r\n");
    assert_eq!(c.session.pending(), 0);
}

#[test]
pub(crate) fn too_large_swallows_the_block_and_drops_the_old_value() {
    let mut c = Conn::new();
    assert_eq!(c.send(b"set k 0 0 1\r\nx\r\n"), "STORED\r\n");
    let mut big = b"set k 0 0 1048517\r\n".to_vec();
    big.resize(big.len() + 1_048_517, b'v');
    big.extend_from_slice(b"XY"); // not even checked
    big.extend_from_slice(b"get k\r\n");
    assert_eq!(
        c.send(&big),
        "SERVER_ERROR object too large for cache\r\nEND\r\n"
    );
    let mut fits = b"set k 0 0 1048516\r\n".to_vec();
    fits.resize(fits.len() + 1_048_516, b'v');
    fits.extend_from_slice(b"\r\n");
    assert_eq!(c.send(&fits), "STORED\r\n");
}

#[test]
pub(crate) fn argument_errors_and_noreply() {
    let mut c = Conn::new();
    let cases: &[(&[u8], &str)] = &[
        (b"GET k\r\n", "ERROR\r\n"),
        (b"\r\n", "ERROR\r\n"),
        (b"get\r\n", "ERROR\r\n"),
        (
            b"incr k x\r\n",
            "CLIENT_ERROR invalid numeric delta argument\r\n",
        ),
        (b"incr k x noreply\r\nmn\r\n", "MN\r\n"),
        (
            b"incr k -1\r\n",
            "CLIENT_ERROR invalid numeric delta argument\r\n",
        ),
        (
            b"touch k x\r\n",
            "CLIENT_ERROR invalid exptime argument\r\n",
        ),
        (
            b"delete k 5\r\n",
            "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n",
        ),
        (b"delete k 5 noreply\r\n", ""),
        (b"delete k 0\r\n", "NOT_FOUND\r\n"),
        (
            b"set k 0 0 -1\r\n",
            "CLIENT_ERROR bad command line format\r\n",
        ),
        (
            b"set k x 0 1\r\nv\r\n",
            "CLIENT_ERROR bad command line format\r\nERROR\r\n",
        ),
        (
            b"set f 4294967296 0 1\r\nv\r\nget f\r\n",
            "STORED\r\nVALUE f 0 1\r\nv\r\nEND\r\n",
        ),
        (
            b"flush_all noreply 5\r\n",
            "CLIENT_ERROR invalid exptime argument\r\n",
        ),
        (b"verbosity 1\r\n", "OK\r\n"),
        (b"version\r\n", "VERSION 1.6.18\r\n"),
        (b"shutdown\r\n", "ERROR: shutdown not enabled\r\n"),
        (b"gat 10\r\n", "END\r\n"),
        (b"mn anything\r\n", "MN\r\n"),
        (b"ms k 2 Z\r\nxx\r\n", "CLIENT_ERROR invalid flag\r\n"),
        (
            b"mg k T\r\n",
            "CLIENT_ERROR bad token in command line format\r\n",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(
            &c.send(input),
            expected,
            "input {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
pub(crate) fn connection_closes() {
    let mut c = Conn::new();
    assert_eq!(c.send(b"get a\r\nquit\r\nget a\r\n"), "END\r\n");
    assert!(c.session.is_closed());
    assert_eq!(c.send(b"get a\r\n"), "");

    let mut c = Conn::new();
    let mut line = b"version\r\n".to_vec();
    line.resize(line.len() + 2100, b'x');
    assert_eq!(c.send(&line), "");
    assert!(c.session.is_closed());

    let mut c = Conn::new();
    let mut get = b"get ".to_vec();
    get.resize(3000, b'k');
    assert_eq!(c.send(&get), "");
    assert!(!c.session.is_closed());

    let mut c = Conn::new();
    assert_eq!(c.send(b"GET / HTTP/1.1\r\n"), "");
    assert!(c.session.is_closed());
}

/// A retrieval with an over-long key discards every reply memcached has not written yet:
/// those since the last write (a successful get, `mn`, an emptied read buffer, or the 21st
/// command of a read). Observed on 1.6.18 with each input sent in one write.
#[test]
pub(crate) fn failed_retrieval_discards_unwritten_replies() {
    let long = "k".repeat(251);
    let bad_get = format!("get {long}\r\n");
    let err = "CLIENT_ERROR bad command line format\r\n";
    let run = |input: Vec<u8>| Conn::new().send(&input);
    assert_eq!(run(format!("flush_all\r\n{bad_get}").into_bytes()), err);
    assert_eq!(
        run(format!("get a\r\nincr a 1\r\n{bad_get}").into_bytes()),
        format!("END\r\n{err}")
    );
    let set = |n: usize| {
        let mut v = format!("set k 0 0 {n}\r\n").into_bytes();
        v.resize(v.len() + n, b'v');
        v.extend_from_slice(b"\r\n");
        v.extend_from_slice(bad_get.as_bytes());
        v
    };
    // A block beyond the 16 KiB read buffer is read directly; the buffer is then empty.
    assert_eq!(run(set(20_000)), format!("STORED\r\n{err}"));
    assert_eq!(run(set(2_000)), err);
    for (incrs, written) in [(19, 0), (20, 0), (21, 21), (22, 21), (25, 21), (45, 41)] {
        let mut input = "incr a 1\r\n".repeat(incrs);
        input += &bad_get;
        let out = run(input.into_bytes());
        assert_eq!(out.matches("NOT_FOUND").count(), written, "{incrs} incrs");
        assert!(out.ends_with(err));
    }
}
