//! Overflow chains: the part of a payload that does not fit on its B-tree page.
//!
//! Each overflow page holds a 4-byte big-endian next-page number (0 on the last page) and
//! then up to U-4 payload bytes. The number of pages in a chain is fixed by the payload
//! size and the local size (cell.rs), so every walk here is bounded by that count: a cycle
//! or a chain of the wrong length is `Corrupt`, never an endless loop.

use super::cell::{overflow_pages, CellInfo};
use super::freelist;
use crate::error::{PageNo, Result, StorageError};
use crate::header::get_u32;
use crate::pages::{PageRead, PageWrite};

fn check_pgno<V: PageRead + ?Sized>(v: &V, pgno: u32, from: PageNo) -> Result<PageNo> {
    if pgno < 2 || pgno > v.page_count() {
        return Err(StorageError::corrupt(
            from,
            format!("overflow page {pgno} out of range"),
        ));
    }
    Ok(PageNo(pgno))
}

/// Appends the whole payload of the cell described by `info` (found on `page`, page
/// `pgno`) to `out`: the local part, then the overflow chain.
pub fn read_payload<V: PageRead + ?Sized>(
    v: &V,
    pgno: PageNo,
    page: &[u8],
    info: &CellInfo,
    out: &mut Vec<u8>,
) -> Result<()> {
    let local = page
        .get(info.local_start..info.local_start + info.local_len)
        .ok_or_else(|| StorageError::corrupt(pgno, "cell payload past the page"))?;
    out.extend_from_slice(local);
    let mut remaining = info.payload_size - info.local_len as u64;
    if remaining == 0 {
        return Ok(());
    }
    let usable = v.usable_size();
    let per_page = usable - 4;
    if remaining > (v.page_count() as u64) * per_page as u64 {
        return Err(StorageError::corrupt(
            pgno,
            "payload larger than the database",
        ));
    }
    out.reserve(remaining as usize);
    let mut next = info.overflow;
    while remaining > 0 {
        let ov = check_pgno(v, next, pgno)?;
        let data = v.page(ov)?;
        let take = remaining.min(per_page as u64) as usize;
        out.extend_from_slice(&data[4..4 + take]);
        remaining -= take as u64;
        next = get_u32(&data, 0);
    }
    Ok(())
}

/// Writes `rest` (the non-local part of a payload) to a fresh overflow chain and returns its
/// first page.
pub fn write_chain<V: PageWrite + ?Sized>(v: &mut V, rest: &[u8]) -> Result<u32> {
    let per_page = v.usable_size() - 4;
    let mut chunks = rest.chunks(per_page).peekable();
    let first = freelist::allocate(v)?;
    let mut cur = first;
    while let Some(chunk) = chunks.next() {
        let next = if chunks.peek().is_some() {
            freelist::allocate(v)?.0
        } else {
            0
        };
        let data = v.page_mut(cur)?;
        data[0..4].copy_from_slice(&next.to_be_bytes());
        data[4..4 + chunk.len()].copy_from_slice(chunk);
        cur = PageNo(next);
    }
    Ok(first.0)
}

/// Frees the overflow chain of a cell (no-op when the payload is all local).
pub fn free_chain<V: PageWrite + ?Sized>(v: &mut V, pgno: PageNo, info: &CellInfo) -> Result<()> {
    if info.overflow == 0 || info.payload_size <= info.local_len as u64 {
        return Ok(());
    }
    let count = overflow_pages(info.payload_size, info.local_len, v.usable_size());
    let mut next = info.overflow;
    for _ in 0..count {
        let ov = check_pgno(v, next, pgno)?;
        next = get_u32(&v.page(ov)?, 0);
        freelist::free(v, ov)?;
    }
    Ok(())
}
