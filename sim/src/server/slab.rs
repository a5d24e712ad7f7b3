//! Slab classes and page accounting: which chunk size an item needs and whether memory
//! for it exists without evicting.
//!
//! memcached carves 1 MiB pages into equal chunks per class (96, 120, 152 … bytes, each
//! ×1.25 and 8-byte aligned, up to `slab_chunk_max`, half a page by default). A class
//! gets a new page while the memory limit allows, and always gets its first page. An item
//! above `slab_chunk_max` is chunked, as memcached 1.6 does it: a header (key, flags,
//! chunk pointers) in the small class that fits it, then chunks of at most
//! `slab_chunk_max` each, every one in the class that fits it
//! (so a 600 KiB value takes one 512 KiB chunk and one of about 88 KiB). The item sits in
//! the LRU of the largest class; each part is allocated, and evicts, in its own class.

use std::cell::RefCell;
use std::sync::Arc;

use crate::server::config::{SLAB_PAGE_SIZE, ServerConfig};

/// Size of a slab page, in bytes ([`SLAB_PAGE_SIZE`] as the slab arithmetic counts).
pub const PAGE_SIZE: u64 = SLAB_PAGE_SIZE as u64;

/// Bytes of an item's header on a 64-bit build with cas enabled (`sizeof(item)` + cas).
pub const ITEM_HEADER: u64 = 48 + 8;

/// The bytes an item occupies: header, key and its NUL, client flags when non-zero, value
/// and its CRLF.
pub fn item_total(key_len: usize, flags: u32, value_len: usize) -> u64 {
    let suffix = if flags == 0 { 0 } else { 4 };
    ITEM_HEADER + key_len as u64 + 1 + suffix + value_len as u64 + 2
}

/// True if an item of these sizes exceeds `limit`, the largest item (`-I`): refused as
/// too large whatever the memory holds.
pub fn too_large(limit: u64, key_len: usize, flags: u32, value_len: usize) -> bool {
    item_total(key_len, flags, value_len) > limit
}

/// Bytes of memcached's `item_chunk` header, in front of every chunk of a chunked item
/// (`sizeof(item_chunk)` on a 64-bit 1.6: three pointers, three ints, two 16-bit and two
/// 8-bit fields, padded to 48). Measured on 1.6.18 with `stats slabs`: a chunk holds at
/// most 524,240 value bytes, and a last chunk of 48 bytes fits the 96-byte class where
/// one of 49 needs the 120-byte one.
pub const CHUNK_HEADER: u64 = 48;

/// Where an item's memory lives: one chunk of one class, or for a chunked item a header
/// chunk, full chunks of the largest class and a last, smaller chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Placement {
    /// The class whose LRU holds the item.
    pub lru_class: usize,
    parts: [(usize, u64); 3],
    len: u8,
    /// Larger than `slab_chunk_max`: a header and chunks.
    chunked: bool,
}

impl Placement {
    fn one(class: usize, chunks: u64) -> Placement {
        Placement {
            lru_class: class,
            parts: [(class, chunks), (0, 0), (0, 0)],
            len: 1,
            chunked: false,
        }
    }

    /// True for an item stored as a header and chunks (memcached's `ITEM_CHUNKED`).
    pub fn is_chunked(&self) -> bool {
        self.chunked
    }

    fn push(&mut self, class: usize, chunks: u64) {
        if let Some(last) = self.parts[..self.len as usize]
            .iter_mut()
            .find(|p| p.0 == class)
        {
            last.1 += chunks;
            return;
        }
        self.parts[self.len as usize] = (class, chunks);
        self.len += 1;
    }

    /// The (class, chunks) runs it takes, header first.
    pub fn parts(&self) -> &[(usize, u64)] {
        &self.parts[..self.len as usize]
    }
}

/// The chunk sizes for a growth factor, computed once per factor and thread and shared
/// by every server built with it (every execution boots a server, and the
/// floating-point walk is not free).
fn class_table(growth_factor: f64, chunk_max: u64) -> Arc<[ClassSize]> {
    /// Tables built so far, by the growth factor's bits and the largest chunk.
    type Tables = Vec<((u64, u64), Arc<[ClassSize]>)>;
    thread_local! {
        static TABLES: RefCell<Tables> = const { RefCell::new(Vec::new()) };
    }
    let id = (growth_factor.to_bits(), chunk_max);
    TABLES.with(|tables| {
        if let Some((_, t)) = tables.borrow().iter().find(|(b, _)| *b == id) {
            return t.clone();
        }
        let t: Arc<[ClassSize]> = build_classes(growth_factor, chunk_max).into();
        tables.borrow_mut().push((id, t.clone()));
        t
    })
}

fn build_classes(growth_factor: f64, chunk_max: u64) -> Vec<ClassSize> {
    let mut classes = Vec::new();
    // memcached keeps the running size in an unsigned int: every step truncates.
    let mut size: u64 = 96;
    while (size as f64) < chunk_max as f64 / growth_factor {
        if !size.is_multiple_of(8) {
            size += 8 - size % 8;
        }
        classes.push(ClassSize {
            chunk: size,
            per_page: PAGE_SIZE / size,
        });
        size = (size as f64 * growth_factor) as u64;
    }
    classes.push(ClassSize {
        chunk: chunk_max,
        per_page: PAGE_SIZE / chunk_max,
    });
    classes
}

/// A class's chunk size and chunks per page.
#[derive(Debug, Clone, Copy)]
struct ClassSize {
    chunk: u64,
    per_page: u64,
}

/// A class's pages and the chunks in use.
#[derive(Debug, Clone, Copy, Default)]
struct Usage {
    pages: u64,
    used: u64,
}

/// All slab classes of one server and the memory they hold.
#[derive(Debug, Clone)]
pub struct Slabs {
    sizes: Arc<[ClassSize]>,
    /// Per class, grown when a class is first used.
    usage: Vec<Usage>,
    malloced: u64,
    limit: u64,
    chunk_max: u64,
}

impl Slabs {
    /// The classes memcached builds for these settings.
    pub fn new(config: &ServerConfig) -> Slabs {
        let chunk_max = u64::from(config.slab_chunk_max);
        Slabs {
            sizes: class_table(config.growth_factor, chunk_max),
            usage: Vec::new(),
            malloced: 0,
            limit: config.memory_limit,
            chunk_max,
        }
    }

    /// Back to no pages handed out, keeping the class table and the usage vector's room.
    pub fn reset(&mut self) {
        self.usage.clear();
        self.malloced = 0;
    }

    /// The class of a chunk of `size` bytes (at most `slab_chunk_max`).
    fn class_of(&self, size: u64) -> usize {
        self.sizes
            .iter()
            .position(|c| c.chunk >= size)
            .unwrap_or(self.sizes.len() - 1)
    }

    /// The class and number of chunks an item of `total` bytes needs (for a chunked item:
    /// the largest class, and its chunks there).
    #[cfg(test)]
    pub fn class_for(&self, total: u64) -> (usize, u64) {
        if total > self.chunk_max {
            return (self.sizes.len() - 1, total.div_ceil(self.chunk_max));
        }
        (self.class_of(total), 1)
    }

    /// Where an item of `total` bytes (of which `value_bytes` are the value and its CRLF)
    /// lives, and `header_bytes` would be its header chunk if it is chunked.
    #[inline]
    pub fn placement(&self, total: u64, header_bytes: u64, value_bytes: u64) -> Placement {
        if total <= self.chunk_max {
            return Placement::one(self.class_of(total), 1);
        }
        let mut p = Placement::one(self.class_of(header_bytes), 1);
        p.lru_class = self.sizes.len() - 1;
        p.chunked = true;
        let mut remaining = value_bytes;
        while remaining > 0 {
            let size = (remaining + CHUNK_HEADER).min(self.chunk_max);
            p.push(self.class_of(size), 1);
            remaining -= size - CHUNK_HEADER;
        }
        p
    }

    /// Chunk size of a class.
    #[cfg(test)]
    pub fn chunk_size(&self, class: usize) -> u64 {
        self.sizes[class].chunk
    }

    /// Creates the usage entries up to `class` on first use.
    fn track(&mut self, class: usize) {
        if class >= self.usage.len() {
            self.usage.resize(class + 1, Usage::default());
        }
    }

    /// Takes `chunks` free chunks of `class`, growing it by pages while memory allows.
    #[inline]
    pub fn try_alloc(&mut self, class: usize, chunks: u64) -> bool {
        self.track(class);
        let per_page = self.sizes[class].per_page;
        let u = &mut self.usage[class];
        loop {
            if u.pages * per_page - u.used >= chunks {
                u.used += chunks;
                return true;
            }
            if u.pages > 0 && self.malloced + PAGE_SIZE > self.limit {
                return false;
            }
            u.pages += 1;
            self.malloced += PAGE_SIZE;
        }
    }

    /// Returns chunks to their class.
    pub fn free(&mut self, class: usize, chunks: u64) {
        self.track(class);
        let u = &mut self.usage[class];
        u.used = u.used.saturating_sub(chunks);
    }

    /// Pages handed out so far, in bytes.
    pub fn malloced(&self) -> u64 {
        self.malloced
    }

    /// Per class with pages, smallest first: its index, chunk size, chunks per page, pages
    /// and chunks in use.
    pub fn classes_in_use(&self) -> impl Iterator<Item = (usize, u64, u64, u64, u64)> + '_ {
        self.usage
            .iter()
            .zip(self.sizes.iter())
            .enumerate()
            .filter(|(_, (u, _))| u.pages > 0)
            .map(|(i, (u, c))| (i, c.chunk, c.per_page, u.pages, u.used))
    }

    /// Per class with pages: chunk size, pages, chunks in use.
    pub fn usage(&self) -> Vec<(u64, u64, u64)> {
        self.usage
            .iter()
            .zip(self.sizes.iter())
            .filter(|(u, _)| u.pages > 0)
            .map(|(u, c)| (c.chunk, u.pages, u.used))
            .collect()
    }

    /// Chunk sizes, smallest first.
    #[cfg(test)]
    pub fn chunk_sizes(&self) -> impl Iterator<Item = u64> + '_ {
        self.sizes.iter().map(|c| c.chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_match_memcached_1_6() {
        let s = Slabs::new(&ServerConfig::default());
        let sizes: Vec<u64> = s.chunk_sizes().take(8).collect();
        assert_eq!(sizes, [96, 120, 152, 192, 240, 304, 384, 480]);
        assert_eq!(s.chunk_sizes().last(), Some(512 * 1024));
        // A 100 KB value lands in a class holding 10 items per page.
        let (class, n) = s.class_for(item_total(3, 0, 100 * 1024));
        assert_eq!((n, PAGE_SIZE / s.chunk_size(class)), (1, 10));
    }

    #[test]
    fn a_large_value_takes_a_header_a_full_chunk_and_a_smaller_one() {
        let s = Slabs::new(&ServerConfig::default());
        let value = 600 * 1024 + 2;
        let total = item_total(6, 0, 600 * 1024);
        let p = s.placement(total, 6 + 1 + ITEM_HEADER + CHUNK_HEADER, value);
        let parts = p.parts();
        assert_eq!(parts.len(), 3, "{parts:?}");
        assert_eq!(s.chunk_size(parts[0].0), 120, "header in a small class");
        assert_eq!(s.chunk_size(parts[1].0), 512 * 1024);
        let rest = value - (512 * 1024 - CHUNK_HEADER) + CHUNK_HEADER;
        assert!(s.chunk_size(parts[2].0) >= rest && s.chunk_size(parts[2].0) < 120 * 1024);
        assert_eq!(p.lru_class, s.chunk_sizes().count() - 1);
    }

    #[test]
    fn largest_value_rule() {
        assert_eq!(item_total(1, 0, 1_048_516), 1_048_576);
        assert_eq!(item_total(1, 7, 1_048_512), 1_048_576);
    }

    #[test]
    fn a_class_always_gets_its_first_page() {
        let mut s = Slabs::new(&ServerConfig::default().memory_mb(1));
        assert!(s.try_alloc(0, 1));
        assert!(s.try_alloc(5, 1));
        assert_eq!(s.malloced(), 2 * PAGE_SIZE);
    }
}
