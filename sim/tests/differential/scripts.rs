//! Scripted sequences: MEMCACHED.md §8 cases that do not depend on time, and edges the random generator reaches rarely. Each batch is sent on its own.

#[allow(unused_imports)]
use super::*;

pub(crate) fn batches(parts: &[&[u8]]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.to_vec()).collect()
}

/// `set key 0 0 n` with `n` bytes of `fill`.
pub(crate) fn set_of(key: &str, n: usize, fill: u8) -> Vec<u8> {
    let mut v = format!("set {key} 0 0 {n}\r\n").into_bytes();
    v.resize(v.len() + n, fill);
    v.extend_from_slice(b"\r\n");
    v
}

pub(crate) fn scripts() -> Vec<Vec<Vec<u8>>> {
    let long = "k".repeat(251);
    let limit = ITEM_MAX - 3 - ITEM_OVERHEAD; // largest value for a 3-byte key
    vec![
        // 2, 3: negative and 30-day boundaries.
        batches(&[b"set k 0 -1 1\r\nx\r\n", b"get k\r\n"]),
        batches(&[
            b"set k 0 2592000 1\r\nx\r\n",
            b"set j 0 2592001 1\r\ny\r\n",
            b"get k j\r\n",
        ]),
        // 4: conditions on live and missing keys.
        batches(&[
            b"set live 0 0 1\r\nx\r\n",
            b"add live 0 0 1\r\ny\r\n",
            b"replace nokey 0 0 1\r\ny\r\n",
            b"append nokey 0 0 1\r\ny\r\n",
            b"incr nokey 1\r\n",
            b"touch nokey 10\r\n",
            b"cas nokey 0 0 1 1\r\ny\r\n",
        ]),
        // 5: append/prepend keep flags and exptime.
        batches(&[
            b"set ap 9 100 3\r\nmid\r\n",
            b"append ap 1 0 4\r\n_end\r\n",
            b"prepend ap 2 5 6\r\nstart_\r\n",
            b"get ap\r\n",
        ]),
        // 7, 8: padding in place, flags and TTL kept, floor at 0.
        batches(&[
            b"set n 3 50 2\r\n10\r\n",
            b"gets n\r\n",
            b"touch n 100\r\n",
            b"gats 200 n\r\n",
            b"decr n 1\r\n",
            b"gets n\r\n",
            b"decr n 100\r\n",
            b"get n\r\n",
        ]),
        // 9, 10: growing, errors.
        batches(&[
            b"set n 0 0 2\r\n99\r\n",
            b"incr n 1\r\n",
            b"get n\r\n",
            b"set hi 0 0 2\r\nhi\r\n",
            b"incr hi 1\r\n",
            b"incr n -1\r\n",
            b"set e 0 0 0\r\n\r\n",
            b"incr e 1\r\n",
            b"set sp 0 0 3\r\n  7\r\n",
            b"incr sp 1\r\n",
            b"get sp\r\n",
        ]),
        // 11: repeated keys.
        batches(&[
            b"set a 0 0 1\r\n1\r\n",
            b"set b 0 0 1\r\n2\r\n",
            b"get a b nokey a\r\n",
        ]),
        // 12: over-long keys.
        vec![
            format!("get {long}\r\n").into_bytes(),
            format!("set {long} 0 0 1\r\nx\r\n").into_bytes(),
            format!("get a {long} b\r\n").into_bytes(),
            format!("incr a 1\r\nget {long}\r\n").into_bytes(),
        ],
        // 13: the size limit; a too-large set drops the old value; append past the limit.
        vec![
            set_of("big", limit, b'v'),
            b"get big\r\n".to_vec(),
            b"append big 0 0 1\r\nx\r\n".to_vec(),
            set_of("big", limit + 1, b'w'),
            b"get big\r\n".to_vec(),
            set_of("big", 20_000, b'u'),
            b"append big 0 0 1\r\nx\r\n".to_vec(),
        ],
        // 14, 15.
        batches(&[
            b"set d 0 0 3\r\nabcde\r\n",
            b"set n 0 0 1\r\n1\r\n",
            b"delete n\r\n",
            b"delete n\r\n",
            b"delete n 5\r\n",
            b"delete n 0\r\n",
        ]),
        // 16: flush.
        batches(&[
            b"set old 0 0 1\r\nx\r\n",
            b"flush_all\r\n",
            b"get old\r\n",
            b"set new 0 0 1\r\ny\r\n",
            b"get old new\r\n",
        ]),
        // Replies discarded by a failing multi-get (unwritten ones only).
        vec![
            b"set a 0 0 1\r\n1\r\nincr a 1\r\ndecr a 1\r\n".to_vec(),
            format!("set a 0 0 1\r\n1\r\nincr a 1\r\nget {long}\r\n").into_bytes(),
            {
                let mut v = set_of("a", 20_000, b'x');
                v.extend_from_slice(format!("get {long}\r\n").as_bytes());
                v
            },
            format!("{}get {long}\r\n", "incr a 1\r\n".repeat(25)).into_bytes(),
        ],
    ]
}

pub(crate) fn meta_scripts() -> Vec<Vec<Vec<u8>>> {
    vec![
        // 18 without the TTL flag, 19.
        batches(&[
            b"mg dp v c N3600\r\n",
            b"mg dp v c N3600\r\n",
            b"ma cnt\r\n",
            b"ma cnt N0 J10 v\r\n",
            b"ma cnt v\r\n",
            b"ma cnt MD D100 v\r\n",
            b"md dp I T3600\r\n",
            b"mg dp v c\r\n",
            b"mg dp v c\r\n",
        ]),
    ]
}
