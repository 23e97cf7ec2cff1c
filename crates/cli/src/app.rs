//! The shell's top level: apply the options, then run the SQL arguments, the prompt or
//! the script on standard input, and turn the outcome into an exit status (non-zero when any
//! error was reported outside the prompt, as sqlite3 does).

use crate::args::Options;
use crate::backend::Backend;
use crate::output::Mode;
use crate::shell::{ChunkReader, Flow, Shell, Source};
use std::io::{BufRead, Write};

/// Where the shell reads and writes; tests substitute buffers.
pub struct Io<'a> {
    pub stdin: Box<dyn BufRead + 'a>,
    pub stdin_is_terminal: bool,
    pub stdout: Box<dyn Write + 'a>,
    pub stderr: Box<dyn Write + 'a>,
}

/// Runs the shell on an open backend; returns the process exit status.
pub fn run(opts: &Options, backend: &mut dyn Backend, io: Io<'_>) -> i32 {
    let Io {
        mut stdin,
        stdin_is_terminal,
        stdout,
        stderr,
    } = io;
    let mut shell = Shell::new(backend, stdout, stderr);
    shell.bail = opts.bail;
    if opts.csv {
        shell.format.set_mode(Mode::Csv);
        // sqlite3's -csv keeps "\n" between rows; only `.mode csv` switches to CRLF.
        shell.format.row_separator = "\n".to_string();
    } else if opts.column {
        shell.format.set_mode(Mode::Column);
    }
    shell.format.headers = opts.header && !opts.noheader;
    shell.headers_set = opts.header || opts.noheader;
    shell.filename = opts.database_path().to_string();
    if let Some(sep) = &opts.separator {
        shell.format.col_separator = sep.clone();
    }
    if let Some(null) = &opts.nullvalue {
        shell.format.null_value = null.clone();
    }

    if !opts.sql.is_empty() {
        for arg in &opts.sql {
            let before = shell.error_count;
            let flow = shell.run_argument(arg);
            if shell.error_count > before {
                shell.flush();
                return 1;
            }
            if flow == Flow::Quit {
                break;
            }
        }
        shell.flush();
        return shell.exit_code;
    }

    if (stdin_is_terminal || opts.interactive) && !opts.batch {
        let mut banner = format!(
            "parlite version {}\nEnter \".help\" for usage hints.",
            env!("CARGO_PKG_VERSION")
        );
        if opts.database.is_none() {
            banner.push_str("\nConnected to a transient in-memory database.");
        }
        if let Err(e) = crate::interactive::run(&mut shell, &banner) {
            eprintln!("parlite: {e}");
            return 1;
        }
        return shell.exit_code;
    }

    let mut reader = ChunkReader::new();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match stdin.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                shell.flush();
                eprintln!("parlite: reading standard input: {e}");
                return 1;
            }
        }
        // `from_utf8` validates ASCII a word at a time; `from_utf8_lossy` walks every byte
        // (~500 instructions a speedtest1 INSERT line under callgrind). Same text either way.
        let line = match std::str::from_utf8(&buf) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(&buf),
        };
        let line = line.trim_end_matches('\n').trim_end_matches('\r');
        if let Some(chunk) = reader.push(line) {
            if shell.run_chunk(&chunk, Source::Script) == Flow::Quit {
                shell.flush();
                return quit_status(&shell);
            }
        }
    }
    if let Some(chunk) = reader.finish() {
        shell.run_chunk(&chunk, Source::Script);
    }
    shell.flush();
    quit_status(&shell)
}

fn quit_status(shell: &Shell<'_>) -> i32 {
    if shell.exit_code != 0 {
        shell.exit_code
    } else if shell.error_count > 0 {
        1
    } else {
        0
    }
}
