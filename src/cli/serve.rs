//! `mcsim serve`: the simulated memcached on TCP, its arguments checked first.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use crate::cli::args::ServeArgs;

impl ServeArgs {
    /// Serves until stopped; bad arguments are an error before any port is taken.
    pub(crate) fn serve(self) -> Result<ExitCode> {
        let ServeArgs {
            port,
            servers,
            clock,
            lose_reply,
            evict,
            delay_ms,
            seed,
            lockstep,
            lockstep_wait_ms,
            trace,
            trace_window,
            name_key,
            memory_mb,
            item_size_max,
            slab_chunk_max,
            threads,
        } = self;
        for (name, p) in [("--lose-reply", lose_reply), ("--evict", evict)] {
            if !(0.0..=1.0).contains(&p) {
                bail!("{name} {p}: give a chance from 0 to 1");
            }
        }
        if servers == 0 || servers > 64 {
            bail!("--servers {servers}: give 1 to 64");
        }
        if let Some(p) = &name_key
            && (p.is_empty() || p.len() > 200 || p.bytes().any(|b| b <= b' ' || b == 0x7f))
        {
            bail!("--name-key {p:?}: give a key prefix of 1 to 200 printable bytes");
        }
        for (flag, p) in [("--lose-reply", lose_reply), ("--evict", evict)] {
            if !(0.0..=1.0).contains(&p) {
                bail!("{flag} {p}: give a chance from 0 to 1");
            }
        }
        if lockstep == Some(0) {
            bail!("--lockstep 0: give the number of client connections");
        }
        let server = mcsim::server::ServerConfig::default()
            .memory_mb(memory_mb)
            .item_size_max(item_size_max)
            .slab_chunk_max(slab_chunk_max);
        if let Some(refusal) = server.refusal() {
            // As memcached: its message alone, and EX_USAGE.
            eprintln!("{refusal}");
            return Ok(ExitCode::from(64));
        }
        let clock = match clock.as_deref() {
            Some("real") => mcsim_serve::ClockMode::Real,
            Some(_) => mcsim_serve::ClockMode::Manual,
            None if lockstep.is_some() => mcsim_serve::ClockMode::Manual,
            None => mcsim_serve::ClockMode::Real,
        };
        with_one_arena();
        let config = mcsim_serve::ServeConfig {
            port,
            servers,
            server,
            clock,
            faults: mcsim_serve::FaultPolicy {
                plan: mcsim::FaultPlan::none()
                    .allow(mcsim::FaultKind::ReplyLost, u32::MAX, lose_reply)
                    .allow(mcsim::FaultKind::Evict, u32::MAX, evict),
                delay: std::time::Duration::from_millis(delay_ms),
            },
            latency: mcsim_serve::COMMAND_TIME,
            seed,
            lockstep,
            lockstep_wait: std::time::Duration::from_millis(lockstep_wait_ms),
            trace,
            trace_window,
            name_key,
            threads: threads as usize,
        };
        mcsim_serve::serve(&config, |addrs| {
            // Whoever started it may stop reading after the ports: serving goes on.
            use std::io::Write;
            let mut out = std::io::stdout();
            for a in addrs {
                let _ = writeln!(out, "listening on {a}");
            }
            let clock = if clock == mcsim_serve::ClockMode::Real {
                "real"
            } else {
                "manual"
            };
            let steps = lockstep.map_or(String::new(), |n| format!("; lockstep over {n} clients"));
            let _ = writeln!(out, "clock {clock}; seed {seed}{steps}");
            let _ = out.flush();
        })
        .context("serving")?;
        Ok(ExitCode::SUCCESS)
    }
}

/// glibc's malloc gives each thread that allocates an arena of its own and keeps what
/// that thread freed there: under memcslap the workers' arenas held 2.4 times memcached's
/// resident set at the same `-m`, and it kept growing. With one arena serve stays within a
/// few percent of memcached's and flat, and a memcslap round takes as long (compare
/// bench §13). glibc reads the limit from the environment as the process starts, so serve
/// starts itself again, same process id and arguments, with `MALLOC_ARENA_MAX=1`; a limit
/// the user set is kept, and where the exec fails serve goes on as it is.
fn with_one_arena() {
    #[cfg(all(unix, target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none()
        && let Ok(exe) = std::env::current_exe()
    {
        use std::os::unix::process::CommandExt;
        // `exec` returns only if it failed.
        let _failed = std::process::Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env("MALLOC_ARENA_MAX", "1")
            .exec();
    }
}
