//! The SQL layer's error type.
//!
//! One enum for the layer (parse, plan, execute, functions), with structured payloads where
//! the SQL layer itself raises the error, and SQLite's exact wording in `Display`, because
//! applications and the sqllogictest corpus match on message text. The API edge maps
//! [`SqlError::code`] / [`SqlError::extended_code`] to the C API's result codes.

use parlite_storage::StorageError;
use std::fmt;

/// SQLite primary result codes used by this layer (sqlite.org/rescode.html).
pub mod codes {
    pub const SQLITE_ERROR: i32 = 1;
    pub const SQLITE_INTERNAL: i32 = 2;
    pub const SQLITE_BUSY: i32 = 5;
    pub const SQLITE_READONLY: i32 = 8;
    pub const SQLITE_IOERR: i32 = 10;
    pub const SQLITE_CORRUPT: i32 = 11;
    pub const SQLITE_FULL: i32 = 13;
    pub const SQLITE_CANTOPEN: i32 = 14;
    pub const SQLITE_TOOBIG: i32 = 18;
    pub const SQLITE_CONSTRAINT: i32 = 19;
    pub const SQLITE_MISMATCH: i32 = 20;
    pub const SQLITE_MISUSE: i32 = 21;
    pub const SQLITE_RANGE: i32 = 25;
    pub const SQLITE_NOTADB: i32 = 26;
    pub const SQLITE_BUSY_SNAPSHOT: i32 = 517;
    pub const SQLITE_ERROR_MISSING_COLLSEQ: i32 = 257;
    pub const SQLITE_ABORT: i32 = 4;
    pub const SQLITE_INTERRUPT: i32 = 9;
    pub const SQLITE_CONSTRAINT_CHECK: i32 = 275;
    pub const SQLITE_CONSTRAINT_COMMITHOOK: i32 = 531;
    pub const SQLITE_CONSTRAINT_FOREIGNKEY: i32 = 787;
    pub const SQLITE_CONSTRAINT_NOTNULL: i32 = 1299;
    pub const SQLITE_CONSTRAINT_PRIMARYKEY: i32 = 1555;
    pub const SQLITE_CONSTRAINT_TRIGGER: i32 = 1811;
    pub const SQLITE_CONSTRAINT_UNIQUE: i32 = 2067;
    pub const SQLITE_CONSTRAINT_ROWID: i32 = 2579;
    pub const SQLITE_CONSTRAINT_DATATYPE: i32 = 3091;
}

#[derive(Debug, Clone, PartialEq)]
pub enum SqlError {
    /// SQLITE_ERROR with a message worded exactly as SQLite words it
    /// (e.g. `near "SELEC": syntax error`, `no such table: t`).
    Error(String),
    /// `no such function: NAME` (SQLITE_ERROR).
    NoSuchFunction { name: String },
    /// `wrong number of arguments to function NAME()` (SQLITE_ERROR).
    WrongArgCount { name: String },
    /// `no such collation sequence: NAME` (SQLITE_ERROR).
    NoSuchCollation { name: String },
    /// `integer overflow` from sum() and abs(i64::MIN) (SQLITE_ERROR).
    IntegerOverflow,
    /// `string or blob too big` (SQLITE_TOOBIG): a result past [`crate::value::MAX_LENGTH_BYTES`].
    TooBig,
    /// Any other result code with its message, for errors no variant names yet.
    Code {
        code: i32,
        extended_code: i32,
        message: String,
    },
    /// An error from the storage layer, passed through unchanged.
    Storage(StorageError),
}

pub type Result<T, E = SqlError> = std::result::Result<T, E>;

impl SqlError {
    /// A plain SQLITE_ERROR with SQLite's wording.
    pub fn msg(message: impl Into<String>) -> Self {
        SqlError::Error(message.into())
    }

    /// An error with an explicit (extended) result code, e.g.
    /// `SqlError::with_code(codes::SQLITE_CONSTRAINT_UNIQUE, "UNIQUE constraint failed: t.a")`.
    /// The primary code is the low byte of the extended code.
    pub fn with_code(extended_code: i32, message: impl Into<String>) -> Self {
        SqlError::Code {
            code: extended_code & 0xff,
            extended_code,
            message: message.into(),
        }
    }

    /// The primary SQLite result code.
    pub fn code(&self) -> i32 {
        self.extended_code() & 0xff
    }

    /// The extended SQLite result code.
    pub fn extended_code(&self) -> i32 {
        use codes::*;
        match self {
            SqlError::Error(_)
            | SqlError::NoSuchFunction { .. }
            | SqlError::WrongArgCount { .. }
            | SqlError::IntegerOverflow => SQLITE_ERROR,
            SqlError::NoSuchCollation { .. } => SQLITE_ERROR_MISSING_COLLSEQ,
            SqlError::TooBig => SQLITE_TOOBIG,
            SqlError::Code { extended_code, .. } => *extended_code,
            SqlError::Storage(e) => match e {
                StorageError::Io { .. } => SQLITE_IOERR,
                StorageError::Corrupt { .. } => SQLITE_CORRUPT,
                StorageError::NotADatabase { .. } => SQLITE_NOTADB,
                StorageError::CantOpen { .. } => SQLITE_CANTOPEN,
                StorageError::Locked { .. } | StorageError::Busy { .. } => SQLITE_BUSY,
                StorageError::BusySnapshot { .. } | StorageError::Conflict { .. } => {
                    SQLITE_BUSY_SNAPSHOT
                }
                StorageError::ReadOnly { .. } => SQLITE_READONLY,
                StorageError::Full => SQLITE_FULL,
                StorageError::TooBig { .. } => SQLITE_TOOBIG,
                StorageError::Misuse { .. } => SQLITE_MISUSE,
            },
        }
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqlError::Error(m) => f.write_str(m),
            SqlError::NoSuchFunction { name } => write!(f, "no such function: {name}"),
            SqlError::WrongArgCount { name } => {
                write!(f, "wrong number of arguments to function {name}()")
            }
            SqlError::NoSuchCollation { name } => write!(f, "no such collation sequence: {name}"),
            SqlError::IntegerOverflow => f.write_str("integer overflow"),
            SqlError::TooBig => f.write_str("string or blob too big"),
            SqlError::Code { message, .. } => f.write_str(message),
            SqlError::Storage(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SqlError {}

impl From<StorageError> for SqlError {
    fn from(e: StorageError) -> Self {
        SqlError::Storage(e)
    }
}
