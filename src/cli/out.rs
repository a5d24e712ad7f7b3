//! Printing to stdout that ends quietly when the reader goes away (`mcsim … | head`).

/// `print!` that ends the program quietly when stdout is closed (`mcsim … | head`)
/// instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::out::write_out(format_args!($($arg)*))
    };
}

/// `println!`, likewise.
macro_rules! outln {
    () => {
        $crate::cli::out::write_out(format_args!("\n"))
    };
    ($($arg:tt)*) => {{
        $crate::cli::out::write_out(format_args!($($arg)*));
        $crate::cli::out::write_out(format_args!("\n"));
    }};
}

pub(crate) fn write_out(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing the output: {e}");
        std::process::exit(2);
    }
}
