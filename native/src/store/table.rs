//! The named tables.

/// The named tables, created at open. The index of a name is its `Table` id.
pub const TABLES: [&str; 18] = [
    "meta",
    "workspaces",
    "root_keys",
    "root_key_hashes",
    "apis",
    "keys",
    "key_hashes",
    "api_keys",
    "permissions",
    "roles",
    "identities",
    "ratelimit_namespaces",
    "ratelimit_overrides",
    "ratelimit_windows",
    "credits",
    "indexes",
    "key_records",
    "counter_log",
];

/// A named table (index into `TABLES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table(u8);

impl Table {
    /// Older layouts' places of credits and windows, read only by migrate.rs.
    pub const CREDITS: Table = Table(14);
    pub const KEYS: Table = Table(5);
    pub const KEY_HASHES: Table = Table(6);
    pub const KEY_RECORDS: Table = Table(16);
    pub const APIS: Table = Table(4);
    pub const ROLES: Table = Table(9);
    pub const IDENTITIES: Table = Table(10);
    /// See CREDITS.
    pub const RATELIMIT_WINDOWS: Table = Table(13);
    pub const RATELIMIT_OVERRIDES: Table = Table(12);
    pub const RATELIMIT_NAMESPACES: Table = Table(11);
    pub const META: Table = Table(0);
    pub const INDEXES: Table = Table(15);
    /// Credits and rate-limit windows, an append-only log (counterlog.rs); written only
    /// through it.
    pub const COUNTER_LOG: Table = Table(17);
}

impl Table {
    pub const COUNT: usize = TABLES.len();

    /// Every table, in id order.
    pub const ALL: [Table; Table::COUNT] = {
        let mut all = [Table(0); Table::COUNT];
        let mut i = 0;
        while i < Table::COUNT {
            all[i] = Table(i as u8);
            i += 1;
        }
        all
    };

    /// Resolves a table name without allocating; `None` for names not in `TABLES`.
    pub fn from_name(name: &[u8]) -> Option<Table> {
        let i = match name {
            b"meta" => 0,
            b"workspaces" => 1,
            b"root_keys" => 2,
            b"root_key_hashes" => 3,
            b"apis" => 4,
            b"keys" => 5,
            b"key_hashes" => 6,
            b"api_keys" => 7,
            b"permissions" => 8,
            b"roles" => 9,
            b"identities" => 10,
            b"ratelimit_namespaces" => 11,
            b"ratelimit_overrides" => 12,
            b"ratelimit_windows" => 13,
            b"credits" => 14,
            b"indexes" => 15,
            b"key_records" => 16,
            b"counter_log" => 17,
            _ => return None,
        };
        Some(Table(i))
    }

    /// The table's LMDB name.
    pub fn name(self) -> &'static str {
        TABLES[self.index()]
    }

    /// The table's id as an index (into `Table::ALL`, and of its cursor in a transaction).
    pub(super) fn index(self) -> usize {
        usize::from(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_resolve_both_ways() {
        for name in TABLES {
            assert_eq!(Table::from_name(name.as_bytes()).unwrap().name(), name);
        }
        assert_eq!(Table::from_name(b"nope"), None);
        assert_eq!(Table::from_name(b""), None);
    }
}
