//! What a participant's step touches ([`Footprint`]), so that a strategy can tell the
//! steps whose order cannot matter: commands on different keys, or both reads; a sleep,
//! or a command that changes nothing another connection could observe, touches only its
//! own participant; entering or leaving a section touches only that section.
//!
//! Steps that are not memcached commands touch made-up keys on a made-up server
//! ([`NOWHERE`]), which no command shares.

use mcsim::codec::gate::Pending;
use mcsim::explore::Footprint;
use mcsim::trace::fnv1a;

/// The server of the steps that touch no server's items.
const NOWHERE: usize = usize::MAX;

/// A command to `server` (one that names no key touches the whole server).
pub(crate) fn command(server: usize, command: &Pending<'_>, participant: &str) -> Footprint {
    if command.inert {
        return private(participant);
    }
    Footprint {
        server,
        keys: command.keys().map(fnv1a).collect(),
        read_only: command.read_only,
    }
}

/// A step of `participant` alone: a sleep, or an inert command.
pub(crate) fn private(participant: &str) -> Footprint {
    made_up("participant", participant)
}

/// Entering or leaving `section`.
pub(crate) fn section(section: &str) -> Footprint {
    made_up("section", section)
}

/// A step that meets the whole of `server`: a connection to it refused.
pub(crate) fn server(server: usize) -> Footprint {
    Footprint {
        server,
        keys: Vec::new(),
        read_only: false,
    }
}

fn made_up(kind: &str, name: &str) -> Footprint {
    Footprint {
        server: NOWHERE,
        keys: vec![fnv1a(format!("\0{kind} {name}").as_bytes())],
        read_only: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcsim::Key;

    #[test]
    fn steps_commute_as_what_they_touch_says() {
        let (x, y) = (Key::new(b"x").unwrap(), Key::new(b"y").unwrap());
        let set_x = command(0, &Pending::of(std::slice::from_ref(&x), false), "t1");
        let get_x = command(
            0,
            &Pending::of(std::slice::from_ref(&x), false).read_only(true),
            "t2",
        );
        let get_x2 = command(
            0,
            &Pending::of(std::slice::from_ref(&x), false).read_only(true),
            "t1",
        );
        let set_y = command(0, &Pending::of(std::slice::from_ref(&y), false), "t2");
        let quit = command(0, &Pending::of(&[], true), "t2");
        assert!(!set_x.commutes_with(&get_x));
        assert!(get_x.commutes_with(&get_x2));
        assert!(set_x.commutes_with(&set_y));
        assert!(set_x.commutes_with(&quit) && set_x.commutes_with(&private("t2")));
        assert!(set_x.commutes_with(&section("lock")));
        assert!(!section("lock").commutes_with(&section("lock")));
        assert!(section("lock").commutes_with(&section("other")));
        assert!(!server(0).commutes_with(&set_x) && server(1).commutes_with(&set_x));
        let flush = command(0, &Pending::of(&[], false), "t1");
        assert!(!flush.commutes_with(&set_y));
    }
}
