//! The `mcsim serve` process: what `stats` says of it, and how it ends.
//!
//! A server that vanishes leaves its clients with nothing to go on, so every way the
//! process can end on its own is said on stderr with its exit status: a signal that
//! stops it (`SIGTERM`, `SIGINT`, `SIGHUP`, `SIGQUIT`), a thread that panicked outside
//! one connection's commands (a connection's own panic ends that connection only), and
//! a listener that stopped. `SIGKILL` (the kernel's out-of-memory killer among others)
//! cannot be caught: only whoever waits for the process sees it.

use std::io::Write;

use mcsim::server::Process;

/// This process, as memcached's `stats` reports its own: `pid`, `rusage_user`,
/// `rusage_system`.
pub(crate) fn this_process() -> Process {
    use nix::sys::resource::{UsageWho, getrusage};
    use nix::sys::time::TimeValLike;
    let pid = std::process::id();
    let Ok(usage) = getrusage(UsageWho::RUSAGE_SELF) else {
        return Process {
            pid,
            ..Process::SIMULATED
        };
    };
    let time = |t: nix::sys::time::TimeVal| {
        std::time::Duration::from_micros(t.num_microseconds().max(0) as u64)
    };
    Process {
        pid,
        user: time(usage.user_time()),
        system: time(usage.system_time()),
    }
}

/// Ends the process with `status`, having said why on stderr.
pub(crate) fn exit(status: i32, cause: &str) -> ! {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "mcsim serve: {cause}; exiting with status {status}");
    let _ = err.flush();
    std::process::exit(status)
}

/// From now on a stopping signal ends the process with 128 + its number, said on
/// stderr. Fails only if the signals cannot be watched.
pub(crate) fn watch_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP, SIGQUIT])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let name = match signal {
                    SIGTERM => "SIGTERM",
                    SIGINT => "SIGINT",
                    SIGHUP => "SIGHUP",
                    _ => "SIGQUIT",
                };
                exit(
                    128 + signal,
                    &format!("stopped by signal {signal} ({name})"),
                );
            }
        })?;
    Ok(())
}

/// Runs `work` on this thread; if it panics, the process ends (the panic's message is
/// already on stderr, from the panic hook), said as the panic of `what`.
pub(crate) fn or_exit<T>(what: &str, work: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(value) => value,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into());
            exit(101, &format!("{what} panicked ({message})"))
        }
    }
}
