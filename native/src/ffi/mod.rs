//! Every `unsafe` of the crate: the foreign interfaces it calls, each behind safe wrappers
//! whose types carry what makes the call sound (an owner that keeps a handle alive, a borrow
//! that ends before the handle does, a slice instead of a pointer). Outside this module the
//! crate is safe Rust.
//!
//! - `lmdb`: the LMDB C API (environment, transactions, cursors);
//! - `napi`: the Node-API subset, declared by hand;
//! - `os`: the C library's calls (file advice and allocation, locks, scheduling, random
//!   bytes, `_exit`);
//! - `cpu`: the cache prefetch hint.

pub mod cpu;
pub mod lmdb;
pub mod napi;
pub mod os;
