//! The named tables, listed once (`tables!` below): a line gives a table's constant and its
//! LMDB name, and its place in the list is its id, the order in which `open` creates them
//! (`Table::ALL`). Adding a table is adding a line. src/engine/tables.ts lists them for JS,
//! compared with the `tables()` export by test/engine/contract.test.ts.

/// A named table: its id, the index of its line below.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Table(u8);

macro_rules! tables {
    ($($(#[$doc:meta])* $konst:ident = $name:literal,)*) => {
        /// The ids, in list order.
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[repr(u8)]
        enum Id {
            $($konst,)*
        }

        impl Table {
            $($(#[$doc])* pub const $konst: Table = Table(Id::$konst as u8);)*

            /// Every table, in id order.
            pub const ALL: [Table; [$($name),*].len()] = [$(Table::$konst),*];

            const NAMES: [&'static str; Table::COUNT] = [$($name),*];
        }
    };
}

tables! {
    META = "meta",
    WORKSPACES = "workspaces",
    ROOT_KEYS = "root_keys",
    ROOT_KEY_HASHES = "root_key_hashes",
    APIS = "apis",
    KEYS = "keys",
    KEY_HASHES = "key_hashes",
    API_KEYS = "api_keys",
    PERMISSIONS = "permissions",
    ROLES = "roles",
    IDENTITIES = "identities",
    RATELIMIT_NAMESPACES = "ratelimit_namespaces",
    RATELIMIT_OVERRIDES = "ratelimit_overrides",
    /// See CREDITS.
    RATELIMIT_WINDOWS = "ratelimit_windows",
    /// Older layouts' places of credits and windows, read only by migrate.rs.
    CREDITS = "credits",
    INDEXES = "indexes",
    KEY_RECORDS = "key_records",
    /// Credits and rate-limit windows, an append-only log (crate::counterlog); written only
    /// through it.
    COUNTER_LOG = "counter_log",
}

impl Table {
    pub const COUNT: usize = Table::ALL.len();

    /// Resolves a table name without allocating; `None` for names not in the list.
    pub fn from_name(name: &[u8]) -> Option<Table> {
        Table::ALL.into_iter().find(|t| t.name().as_bytes() == name)
    }

    /// The table of an id (`id`); `None` for ids not in the list.
    pub fn from_id(id: u8) -> Option<Table> {
        Table::ALL.get(usize::from(id)).copied()
    }

    /// The table's LMDB name.
    pub fn name(self) -> &'static str {
        Table::NAMES[self.index()]
    }

    /// The table's id (its place in the list; src/engine/tables.ts names it the same).
    pub fn id(self) -> u8 {
        self.0
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
        for table in Table::ALL {
            assert_eq!(Table::from_name(table.name().as_bytes()), Some(table));
            assert_eq!(Table::from_id(table.id()), Some(table));
        }
        assert_eq!(Table::ALL.map(|t| t.index()), std::array::from_fn(|i| i), "ids in list order");
        assert_eq!(Table::from_name(b"counter_log"), Some(Table::COUNTER_LOG));
        assert_eq!(Table::from_name(b"nope"), None);
        assert_eq!(Table::from_name(b""), None);
    }
}
