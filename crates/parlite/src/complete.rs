//! Statement-completeness detection, a port of SQLite's `sqlite3_complete` (complete.c).
//!
//! It lives here, under every front end: the C API exports it as `sqlite3_complete`, and
//! the shell and the speedtest replayer accumulate input lines until the text holds a complete
//! SQL statement: it ends in `;` outside quotes and comments, and a `CREATE TRIGGER` body has
//! reached its `END;`. This module only classifies text; it never parses SQL.

/// Token classes of the completeness state machine (complete.c's `tkSEMI` … `tkEND`).
#[derive(Clone, Copy)]
enum Token {
    Semi = 0,
    Ws = 1,
    Other = 2,
    Explain = 3,
    Create = 4,
    Temp = 5,
    Trigger = 6,
    End = 7,
}

/// complete.c's transition table: `TRANS[state][token]` is the next state. States: 0 invalid,
/// 1 start (after a `;`), 2 normal, 3 after EXPLAIN, 4 after CREATE, 5 in a trigger body,
/// 6 `;` inside a trigger body, 7 `END` inside a trigger body.
const TRANS: [[u8; 8]; 8] = [
    [1, 0, 2, 3, 4, 2, 2, 2],
    [1, 1, 2, 3, 4, 2, 2, 2],
    [1, 2, 2, 2, 2, 2, 2, 2],
    [1, 3, 3, 2, 4, 2, 2, 2],
    [1, 4, 2, 2, 2, 4, 5, 2],
    [6, 5, 5, 5, 5, 5, 5, 5],
    [6, 6, 5, 5, 5, 5, 5, 7],
    [1, 7, 5, 5, 5, 5, 5, 5],
];

/// SQLite's identifier characters: letters, digits, `_`, `$` and every byte >= 0x80.
fn is_id_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// True when `sql` ends a complete statement, exactly as `sqlite3_complete` answers.
pub fn is_complete(sql: &str) -> bool {
    let z = sql.as_bytes();
    let mut state: u8 = 0;
    let mut i = 0;
    while i < z.len() {
        let c = z[i];
        let token = match c {
            b';' => Token::Semi,
            b' ' | b'\r' | b'\t' | b'\n' | b'\x0c' => Token::Ws,
            b'/' if z.get(i + 1) == Some(&b'*') => {
                // C-style comment: unterminated means incomplete.
                match find(z, i + 2, b"*/") {
                    Some(end) => i = end + 1,
                    None => return false,
                }
                Token::Ws
            }
            b'-' if z.get(i + 1) == Some(&b'-') => {
                // SQL comment to end of line; at end of input the answer is the state so far.
                match z[i..].iter().position(|&b| b == b'\n') {
                    Some(p) => i += p,
                    None => return state == 1,
                }
                Token::Ws
            }
            b'[' => {
                match z[i + 1..].iter().position(|&b| b == b']') {
                    Some(p) => i += 1 + p,
                    None => return false,
                }
                Token::Other
            }
            b'`' | b'"' | b'\'' => {
                // A doubled quote inside a string is two back-to-back strings here, which
                // classifies the same way.
                match z[i + 1..].iter().position(|&b| b == c) {
                    Some(p) => i += 1 + p,
                    None => return false,
                }
                Token::Other
            }
            _ if is_id_char(c) => {
                let start = i;
                while i + 1 < z.len() && is_id_char(z[i + 1]) {
                    i += 1;
                }
                keyword_token(&z[start..=i])
            }
            _ => Token::Other,
        };
        state = TRANS[state as usize][token as usize];
        i += 1;
    }
    state == 1
}

/// Index of the first byte of `needle` in `z` at or after `from`.
fn find(z: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from > z.len() {
        return None;
    }
    z[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

fn keyword_token(word: &[u8]) -> Token {
    let eq = |k: &str| word.eq_ignore_ascii_case(k.as_bytes());
    if !word[0].is_ascii_alphabetic() {
        Token::Other
    } else if eq("create") {
        Token::Create
    } else if eq("trigger") {
        Token::Trigger
    } else if eq("temp") || eq("temporary") {
        Token::Temp
    } else if eq("end") {
        Token::End
    } else if eq("explain") {
        Token::Explain
    } else {
        Token::Other
    }
}
