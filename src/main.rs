//! The `mcsim` command line over the recipes mcsim ships.

fn main() -> std::process::ExitCode {
    mcsim_cli::main(mcsim_models::RECIPES)
}
