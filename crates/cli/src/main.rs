//! The `parlite` binary: parses arguments, opens the database and hands over to `app::run`.

#[cfg(feature = "parlite-api")]
fn main() {
    use std::io::IsTerminal;
    let opts = match parlite_cli::args::parse_args(std::env::args()) {
        Ok(o) => o,
        Err(e) => e.exit(),
    };
    let mut backend = match parlite_cli::parlite_backend::ParliteBackend::open(opts.database_path())
    {
        Ok(b) => b,
        Err(e) => {
            eprintln!(
                "Error: unable to open database \"{}\": {e}",
                opts.database_path()
            );
            std::process::exit(1);
        }
    };
    let stdin = std::io::stdin();
    let io = parlite_cli::app::Io {
        stdin_is_terminal: stdin.is_terminal(),
        // Not `stdin.lock()`: the prompt's line editor locks stdin itself when it is not a
        // terminal (`-interactive` on a pipe), and holding the lock here would deadlock it.
        stdin: Box::new(std::io::BufReader::new(stdin)),
        stdout: Box::new(std::io::BufWriter::new(std::io::stdout())),
        stderr: Box::new(std::io::stderr()),
    };
    let code = parlite_cli::app::run(&opts, &mut backend, io);
    // Close the database before exiting: the last handle's drop checkpoints the log into the
    // database file and removes it, so stock sqlite3 sees every change (process::exit would
    // skip the destructors and leave that to the next open's recovery).
    drop(backend);
    std::process::exit(code);
}

/// Without the parlite API there is no database to run the shell on: say so and fail.
#[cfg(not(feature = "parlite-api"))]
fn main() {
    // Arguments are still checked, so `--help` and `--version` work and typos are reported.
    if let Err(e) = parlite_cli::args::parse_args(std::env::args()) {
        e.exit();
    }
    eprintln!(
        "parlite: this build has no database engine (the `parlite-api` feature is off); \
         rebuild with it"
    );
    std::process::exit(1);
}
