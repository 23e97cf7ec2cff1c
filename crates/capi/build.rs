//! The library's soname is SQLite's, `libsqlite3.so.0`: a program linked against the system
//! library records that name, and the dynamic loader then takes ours from LD_LIBRARY_PATH.
//!
//! The C-variadic functions of the API (`sqlite3_mprintf`, `sqlite3_config`, ...), which
//! stable Rust cannot define, and the mutexes are C (c/*.c). rustc exports only Rust's
//! `#[no_mangle]` items from a cdylib (its version script hides every other symbol), so a
//! second version script names the C ones as global; lib.rs keeps them linked in.

use std::io::Write;

/// The functions c/*.c defines for programs to call.
const C_EXPORTS: &[&str] = &[
    "sqlite3_mprintf",
    "sqlite3_vmprintf",
    "sqlite3_snprintf",
    "sqlite3_vsnprintf",
    "sqlite3_str_new",
    "sqlite3_str_finish",
    "sqlite3_str_appendf",
    "sqlite3_str_vappendf",
    "sqlite3_str_append",
    "sqlite3_str_appendall",
    "sqlite3_str_appendchar",
    "sqlite3_str_reset",
    "sqlite3_str_errcode",
    "sqlite3_str_length",
    "sqlite3_str_value",
    "sqlite3_config",
    "sqlite3_db_config",
    "sqlite3_test_control",
    "sqlite3_vtab_config",
    "sqlite3_mutex_alloc",
    "sqlite3_mutex_free",
    "sqlite3_mutex_enter",
    "sqlite3_mutex_try",
    "sqlite3_mutex_leave",
];

fn main() {
    println!("cargo:rerun-if-changed=c/variadic.c");
    println!("cargo:rerun-if-changed=c/mutex.c");
    cc::Build::new()
        .file("c/variadic.c")
        .file("c/mutex.c")
        .warnings(true)
        .compile("parlite_capi_c");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libsqlite3.so.0");
        let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
        let script = out.join("c_exports.map");
        let mut f = std::fs::File::create(&script).expect("create the version script");
        writeln!(f, "{{ global: {}; }};", C_EXPORTS.join("; ")).expect("write it");
        println!(
            "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
            script.display()
        );
    }
}
