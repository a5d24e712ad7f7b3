//! One run of a program against the servers, then the next ([`Running::reset`]): what a
//! connection of the run that ended still sends reaches nothing of the run under way.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use mcsim::server::ServerConfig;
use mcsim_serve::{ClockMode, FaultPolicy, Running, ServeConfig};

fn servers() -> Running {
    mcsim_serve::start(&ServeConfig {
        port: 0,
        servers: 1,
        server: ServerConfig::default(),
        clock: ClockMode::Manual,
        faults: FaultPolicy::default(),
        latency: mcsim_serve::COMMAND_TIME,
        seed: 1,
        lockstep: None,
        lockstep_wait: Duration::from_secs(5),
        trace: None,
        trace_window: mcsim_serve::DEFAULT_TRACE_WINDOW,
        name_key: None,
        threads: mcsim_serve::DEFAULT_THREADS,
    })
    .expect("the servers start")
}

/// Sends `line` and reads one line of reply.
fn say(stream: &mut TcpStream, line: &str) -> String {
    stream.write_all(format!("{line}\r\n").as_bytes()).unwrap();
    let mut reply = String::new();
    BufReader::new(stream.try_clone().unwrap())
        .read_line(&mut reply)
        .unwrap();
    reply
}

/// A program's control line left from its run (the program ending as the run did, its
/// last lines still unread) says a failure, a figure and a sleep once the next run has
/// begun: the next run has none of them, no misuse is counted against it, and the line
/// is closed, as a data connection of an earlier run is at its next command.
#[test]
fn a_control_line_of_an_earlier_run_reaches_nothing_of_the_next() {
    let running = servers();
    let mut old = TcpStream::connect(running.addrs()[0]).unwrap();
    old.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(say(&mut old, "mcsim metric before 1"), "OK\r\n");
    running.reset(2, None, None);
    old.write_all(b"mcsim fail left over\r\nmcsim metric after 1\r\nmcsim sleep 100 t0\r\n")
        .unwrap();
    let mut rest = Vec::new();
    let closed = old.read_to_end(&mut rest);
    assert!(
        closed.is_ok() && rest.is_empty(),
        "closed without a reply: {closed:?} {rest:?}"
    );
    assert!(running.failures().is_empty(), "{:?}", running.failures());
    assert!(running.misuse().is_empty(), "{:?}", running.misuse());
    assert!(running.declared().0.is_empty(), "{:?}", running.declared());
    // A line of this run is heard.
    let mut new = TcpStream::connect(running.addrs()[0]).unwrap();
    assert_eq!(say(&mut new, "mcsim fail now"), "OK\r\n");
    assert_eq!(running.failures().len(), 1, "{:?}", running.failures());
}
