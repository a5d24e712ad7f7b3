//! The `mcsim` command line.
fn main() {}
