//! An open-addressing hash table keyed by 16-byte names whose bytes 8..16 are already a
//! hash (counter names, counterlog/), with one 64-byte slot per name: the name, the value
//! and an occupied flag in one cache line.
//!
//! Why not `std::collections::HashMap`: it keeps its control bytes apart from its slots, so
//! over a million counters a lookup missed the cache twice (control group, then slot), and
//! the slot a lookup will read cannot be prefetched from outside. Here a lookup reads the
//! line of its home slot and, when that is taken by another name, the lines after it
//! (linear probing, which the hardware prefetcher follows), and `prefetch` starts that read
//! ahead of time, so a batch of lookups (the garbage visits) waits for memory once.
//!
//! Contract: at most 7/10 of the slots are occupied (the table doubles past that, moving
//! every entry); a removal shifts the entries after it back (no tombstones), so a lookup
//! stops at the first empty slot.

pub use crate::ffi::cpu::prefetch_line;

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Slot<V: Copy + Default> {
    key: [u8; 16],
    occupied: bool,
    value: V,
}

pub struct Slots<V: Copy + Default> {
    slots: Vec<Slot<V>>,
    len: usize,
}

impl<V: Copy + Default> Default for Slots<V> {
    fn default() -> Self {
        Slots { slots: Vec::new(), len: 0 }
    }
}

const MIN_SLOTS: usize = 16;

fn hash(key: &[u8; 16]) -> usize {
    u64::from_le_bytes(key[8..16].try_into().expect("8 bytes")) as usize
}

impl<V: Copy + Default> Slots<V> {
    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }

    /// Slots allocated (occupied or not): what `scan` walks in one round.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot of `key`, or of the empty slot where it would go. Only with slots.
    fn find(&self, key: &[u8; 16]) -> usize {
        let mask = self.mask();
        let mut i = hash(key) & mask;
        loop {
            let slot = &self.slots[i];
            if !slot.occupied || slot.key == *key {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    pub fn get(&self, key: &[u8; 16]) -> Option<&V> {
        if self.slots.is_empty() {
            return None;
        }
        let slot = &self.slots[self.find(key)];
        slot.occupied.then_some(&slot.value)
    }

    /// Starts reading the line of `key`'s home slot into the cache (a hint; no effect on
    /// what any call returns).
    #[inline]
    pub fn prefetch(&self, key: &[u8; 16]) {
        if let Some(slot) = self.slots.get(hash(key) & self.slots.len().wrapping_sub(1)) {
            prefetch_line(slot);
        }
    }

    /// Sets `key`'s value; returns the one it replaced.
    pub fn insert(&mut self, key: [u8; 16], value: V) -> Option<V> {
        if (self.len + 1) * 10 > self.slots.len() * 7 {
            self.grow();
        }
        let i = self.find(&key);
        let slot = &mut self.slots[i];
        if slot.occupied {
            return Some(std::mem::replace(&mut slot.value, value));
        }
        *slot = Slot { key, occupied: true, value };
        self.len += 1;
        None
    }

    /// Removes `key`; returns its value. The entries after it in its run move back so that
    /// each stays reachable from its home slot without passing an empty one.
    pub fn remove(&mut self, key: &[u8; 16]) -> Option<V> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.mask();
        let mut hole = self.find(key);
        if !self.slots[hole].occupied {
            return None;
        }
        let value = self.slots[hole].value;
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            if !self.slots[j].occupied {
                break;
            }
            // The entry at j may fill the hole unless its home lies cyclically in (hole, j].
            let home = hash(&self.slots[j].key) & mask;
            let stays = if hole <= j { hole < home && home <= j } else { hole < home || home <= j };
            if !stays {
                self.slots[hole] = self.slots[j];
                hole = j;
            }
        }
        self.slots[hole] = Slot::default();
        self.len -= 1;
        Some(value)
    }

    /// The entries in slots `at..at + max` (name and value) into `out`; returns the slot to
    /// go on from (0 once the end is reached) and how many slots it looked at.
    pub fn scan(&self, at: usize, max: usize, out: &mut Vec<([u8; 16], V)>) -> (usize, usize) {
        let end = at.saturating_add(max).min(self.slots.len());
        let start = at.min(end);
        out.extend(self.slots[start..end].iter().filter(|s| s.occupied).map(|s| (s.key, s.value)));
        (if end >= self.slots.len() { 0 } else { end }, end - start)
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(MIN_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); size]);
        for slot in old.into_iter().filter(|s| s.occupied) {
            let i = self.find(&slot.key);
            self.slots[i] = slot;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A name whose hash bytes put it at `home` in a table of at least `home + 1` slots.
    fn name(home: u8, n: u8) -> [u8; 16] {
        let mut k = [0u8; 16];
        k[0] = n;
        k[8] = home;
        k
    }

    #[test]
    fn a_slot_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Slot<(u64, [u8; 32])>>(), 64);
        assert_eq!(std::mem::align_of::<Slot<(u64, [u8; 32])>>(), 64);
    }

    #[test]
    fn removal_keeps_every_colliding_name_reachable_also_across_the_end() {
        let mut t: Slots<u32> = Slots::default();
        // 16 slots: names homed at 14 and 15 wrap around to 0 and 1.
        let names = [name(14, 1), name(14, 2), name(15, 3), name(14, 4), name(0, 5), name(3, 6)];
        for (i, k) in names.iter().enumerate() {
            assert_eq!(t.insert(*k, i as u32), None);
        }
        assert_eq!(t.slots.len(), 16);
        for victim in 0..names.len() {
            let mut u: Slots<u32> = Slots::default();
            for (i, k) in names.iter().enumerate() {
                u.insert(*k, i as u32);
            }
            assert_eq!(u.remove(&names[victim]), Some(victim as u32));
            assert_eq!(u.remove(&names[victim]), None);
            assert_eq!(u.len(), names.len() - 1);
            for (i, k) in names.iter().enumerate() {
                assert_eq!(u.get(k).copied(), (i != victim).then_some(i as u32), "victim {victim}, name {i}");
            }
        }
    }

    #[test]
    fn agrees_with_a_hash_map_over_random_inserts_replacements_and_removals() {
        let mut t: Slots<u64> = Slots::default();
        let mut m: HashMap<[u8; 16], u64> = HashMap::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for step in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut k = [0u8; 16];
            k[0] = 1;
            // Few distinct names (about 3,000), so replacements and removals are frequent,
            // and hash bytes that collide often.
            let n = x % 3_000;
            k[8..16].copy_from_slice(&(n % 1_000).to_le_bytes());
            k[1..3].copy_from_slice(&(n as u16).to_le_bytes());
            if x % 3 == 0 {
                assert_eq!(t.remove(&k), m.remove(&k), "step {step}");
            } else {
                assert_eq!(t.insert(k, step), m.insert(k, step), "step {step}");
            }
            assert_eq!(t.len(), m.len());
        }
        for (k, v) in &m {
            assert_eq!(t.get(k), Some(v));
        }
        assert!(t.len() * 10 <= t.slots.len() * 7);
    }
}
