//! The foreign interfaces the crate calls, each behind safe wrappers whose types carry what
//! makes the call sound (an owner that keeps a handle alive, a borrow that ends before the
//! handle does, a slice instead of a pointer).
//!
//! - `napi`: the Node-API subset, declared by hand;
//! - `os`: the C library's calls (random bytes, `_exit`);
//! - `cpu`: the cache prefetch hint.

pub mod cpu;
pub mod napi;
pub mod os;
