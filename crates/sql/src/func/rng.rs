//! The pseudo-random source behind random() and randomblob().
//!
//! SplitMix64 per thread, seeded from std's per-process random hasher keys, the time and
//! the thread. SQLite uses ChaCha20; nothing observable depends on the generator beyond
//! "unpredictable", and these functions are not meant for cryptography in either engine.

use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash, Hasher};

thread_local! {
    static STATE: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    let mut h = RandomState::new().build_hasher();
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    std::thread::current().id().hash(&mut h);
    h.finish()
}

/// Next 64 random bits.
pub fn next_u64() -> u64 {
    STATE.with(|s| {
        let x = s.get().wrapping_add(0x9e37_79b9_7f4a_7c15);
        s.set(x);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

/// Fills `buf` with random bytes.
pub fn fill(buf: &mut [u8]) {
    for chunk in buf.chunks_mut(8) {
        let r = next_u64().to_le_bytes();
        chunk.copy_from_slice(&r[..chunk.len()]);
    }
}
