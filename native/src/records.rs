//! The records the verification engine reads, decoded field by field from the msgpack maps
//! that management code writes (src/store/records.ts is the other half of this contract;
//! test/engine/records.test.ts checks both sides against each other). Unknown fields are
//! skipped, so management code may add fields the engine does not need.

use crate::msgpack::{array_items, map_entries, DecodeError, Reader, Result, Value};

#[derive(Debug, Clone, PartialEq)]
pub struct RatelimitDef<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub limit: i64,
    pub duration_ms: i64,
    pub auto_apply: bool,
}

#[derive(Debug, Default)]
pub struct KeyRecord<'a> {
    pub id: &'a str,
    pub api_id: &'a str,
    pub workspace_id: &'a str,
    pub enabled: bool,
    pub name: Option<&'a str>,
    pub expires_at_ms: Option<i64>,
    pub identity_id: Option<&'a str>,
    pub meta_json: Option<&'a str>,
    pub permissions: Vec<&'a str>,
    pub role_ids: Vec<&'a str>,
    pub ratelimits: Vec<RatelimitDef<'a>>,
}

#[derive(Debug, Default)]
pub struct ApiRecord<'a> {
    pub workspace_id: &'a str,
    pub deleted: bool,
}

#[derive(Debug, Default)]
pub struct RoleRecord<'a> {
    pub name: &'a str,
    pub permissions: Vec<&'a str>,
}

#[derive(Debug, Default)]
pub struct IdentityRecord<'a> {
    pub id: &'a str,
    pub external_id: &'a str,
    pub meta_json: Option<&'a str>,
    pub ratelimits: Vec<RatelimitDef<'a>>,
}

fn root(bytes: &[u8]) -> Result<Value<'_>> {
    Reader::top(bytes)
}

fn text<'a>(v: Value<'a>) -> Result<&'a str> {
    v.as_str().ok_or(DecodeError("expected a string"))
}

fn int(v: Value<'_>) -> Result<i64> {
    v.as_i64().ok_or(DecodeError("expected an integer"))
}

fn strings<'a>(v: Value<'a>) -> Result<Vec<&'a str>> {
    array_items(v)?.map(|item| text(item?)).collect()
}

fn ratelimits<'a>(v: Value<'a>) -> Result<Vec<RatelimitDef<'a>>> {
    array_items(v)?
        .map(|item| {
            let mut def = RatelimitDef { id: "", name: "", limit: 0, duration_ms: 0, auto_apply: false };
            for entry in map_entries(item?)? {
                let (k, v) = entry?;
                match k {
                    b"id" => def.id = text(v)?,
                    b"name" => def.name = text(v)?,
                    b"limit" => def.limit = int(v)?,
                    b"durationMs" => def.duration_ms = int(v)?,
                    b"autoApply" => def.auto_apply = v.as_bool().unwrap_or(false),
                    _ => {}
                }
            }
            Ok(def)
        })
        .collect()
}

pub fn key(bytes: &[u8]) -> Result<KeyRecord<'_>> {
    let mut k = KeyRecord::default();
    for entry in map_entries(root(bytes)?)? {
        let (name, v) = entry?;
        match name {
            b"id" => k.id = text(v)?,
            b"apiId" => k.api_id = text(v)?,
            b"workspaceId" => k.workspace_id = text(v)?,
            b"enabled" => k.enabled = v.as_bool().unwrap_or(false),
            b"name" => k.name = v.as_str(),
            b"expiresAtMs" => k.expires_at_ms = v.as_i64(),
            b"identityId" => k.identity_id = v.as_str(),
            b"metaJson" => k.meta_json = v.as_str(),
            b"permissions" => k.permissions = strings(v)?,
            b"roleIds" => k.role_ids = strings(v)?,
            b"ratelimits" => k.ratelimits = ratelimits(v)?,
            _ => {}
        }
    }
    Ok(k)
}

pub fn api(bytes: &[u8]) -> Result<ApiRecord<'_>> {
    let mut a = ApiRecord::default();
    for entry in map_entries(root(bytes)?)? {
        let (name, v) = entry?;
        match name {
            b"workspaceId" => a.workspace_id = text(v)?,
            b"deletedAtMs" => a.deleted = !matches!(v, Value::Nil),
            _ => {}
        }
    }
    Ok(a)
}

pub fn role(bytes: &[u8]) -> Result<RoleRecord<'_>> {
    let mut r = RoleRecord::default();
    for entry in map_entries(root(bytes)?)? {
        let (name, v) = entry?;
        match name {
            b"name" => r.name = text(v)?,
            b"permissions" => r.permissions = strings(v)?,
            _ => {}
        }
    }
    Ok(r)
}

pub fn identity(bytes: &[u8]) -> Result<IdentityRecord<'_>> {
    let mut i = IdentityRecord::default();
    for entry in map_entries(root(bytes)?)? {
        let (name, v) = entry?;
        match name {
            b"id" => i.id = text(v)?,
            b"externalId" => i.external_id = text(v)?,
            b"metaJson" => i.meta_json = v.as_str(),
            b"ratelimits" => i.ratelimits = ratelimits(v)?,
            _ => {}
        }
    }
    Ok(i)
}

/// ratelimit_overrides value. Keys: `<namespaceId>/e/<sid>` (exact identifiers) and
/// `<namespaceId>/w/<sid>` (identifiers with `*`, matched as patterns), where sid is
/// `storage_id(identifier)`.
#[derive(Debug, Default)]
pub struct OverrideRecord<'a> {
    pub id: &'a str,
    pub identifier: &'a str,
    pub limit: i64,
    pub duration_ms: i64,
}

pub fn override_record(bytes: &[u8]) -> Result<OverrideRecord<'_>> {
    let mut o = OverrideRecord::default();
    for entry in map_entries(root(bytes)?)? {
        let (name, v) = entry?;
        match name {
            b"id" => o.id = text(v)?,
            b"identifier" => o.identifier = text(v)?,
            b"limit" => o.limit = int(v)?,
            b"durationMs" => o.duration_ms = int(v)?,
            _ => {}
        }
    }
    Ok(o)
}
