//! The mcsim command line for the rate limiter: `run`, `replay`, `explore` and `check`.

fn main() -> std::process::ExitCode {
    mcsim_cli::main(rate_limiter::FAMILIES)
}
