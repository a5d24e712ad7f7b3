//! The `mcsim` command line as a library, with what only it needs: the gate's and runs'
//! reports as one HTML page ([`html`]), the findings report ([`findings`]), and the
//! commands that talk to real sockets and processes (`serve`, from [`mcsim_serve`];
//! `confirm`, from [`mcsim_real`]).
//!
//! A model author's crate depends on `mcsim` alone; a crate that wants the whole command
//! line for its own families adds this one and writes a `main` of one line
//! ([`main`]).

pub mod cli;
pub mod findings;
pub mod html;

pub use cli::main;
