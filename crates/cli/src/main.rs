fn main() {
    eprintln!("parlite: the shell is not built yet");
    std::process::exit(1);
}
