//! The library's soname is SQLite's, `libsqlite3.so.0`: a program linked against the system
//! library records that name, and the dynamic loader then takes ours from LD_LIBRARY_PATH.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libsqlite3.so.0");
    }
}
