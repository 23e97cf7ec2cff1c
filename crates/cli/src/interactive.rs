//! The prompt: line editing and history (rustyline) over the same chunking and execution
//! as scripts, with errors worded for the prompt.

use crate::shell::{ChunkReader, Flow, Shell, Source};
use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;
use std::path::PathBuf;

fn history_path() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".parlite_history"))
}

/// Runs the prompt until `.quit`, end of input (Ctrl-D) or a fatal terminal error.
pub fn run(shell: &mut Shell<'_>, banner: &str) -> Result<(), String> {
    let mut editor = DefaultEditor::new().map_err(|e| format!("cannot start line editing: {e}"))?;
    let history = history_path();
    if let Some(h) = &history {
        // A missing history file is the normal first run.
        let _ = editor.load_history(h);
    }
    println!("{banner}");
    let mut reader = ChunkReader::new();
    loop {
        shell.flush();
        // `.prompt` may change them between lines.
        let prompt = if reader.is_pending() {
            shell.prompts.1.clone()
        } else {
            shell.prompts.0.clone()
        };
        match editor.readline(&prompt) {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = editor.add_history_entry(line.as_str());
                }
                if let Some(chunk) = reader.push(&line) {
                    if shell.run_chunk(&chunk, Source::Prompt) == Flow::Quit {
                        break;
                    }
                }
            }
            // Ctrl-C abandons the statement being typed, as in sqlite3.
            Err(ReadlineError::Interrupted) => reader.clear(),
            Err(ReadlineError::Eof) => {
                if let Some(chunk) = reader.finish() {
                    shell.run_chunk(&chunk, Source::Prompt);
                }
                break;
            }
            Err(e) => return Err(format!("reading the terminal: {e}")),
        }
    }
    shell.flush();
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    Ok(())
}
