//! The records the verification engine reads, decoded in one pass from the msgpack maps
//! that management code writes (src/store/records.ts is the other half of this contract;
//! test/engine/verify.test.ts exercises both sides together). Unknown fields are skipped,
//! so management code may add fields the engine does not need. Text fields are the stored
//! bytes (written by management code from JS strings, so UTF-8).

use crate::msgpack::{Reader, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct RatelimitDef<'a> {
    pub id: &'a [u8],
    pub name: &'a [u8],
    pub limit: i64,
    pub duration_ms: i64,
    pub auto_apply: bool,
}

#[derive(Debug, Default)]
pub struct KeyRecord<'a> {
    pub id: &'a [u8],
    pub api_id: &'a [u8],
    pub workspace_id: &'a [u8],
    pub enabled: bool,
    pub name: Option<&'a [u8]>,
    pub expires_at_ms: Option<i64>,
    pub identity_id: Option<&'a [u8]>,
    /// The key's meta as JSON text (management code stores JSON.stringify's output).
    pub meta_json: Option<&'a [u8]>,
    pub permissions: Vec<&'a [u8]>,
    pub role_ids: Vec<&'a [u8]>,
    pub ratelimits: Vec<RatelimitDef<'a>>,
}

#[derive(Debug, Default)]
pub struct ApiRecord<'a> {
    pub workspace_id: &'a [u8],
    pub deleted: bool,
}

#[derive(Debug, Default)]
pub struct RoleRecord<'a> {
    pub name: &'a [u8],
    pub permissions: Vec<&'a [u8]>,
}

#[derive(Debug, Default)]
pub struct IdentityRecord<'a> {
    pub id: &'a [u8],
    pub external_id: &'a [u8],
    pub meta_json: Option<&'a [u8]>,
    pub ratelimits: Vec<RatelimitDef<'a>>,
}

/// Calls `field(name, reader)` for each entry of the record's top-level map; `field` reads
/// (or skips) exactly that entry's value.
fn fields<'a>(bytes: &'a [u8], mut field: impl FnMut(&'a [u8], &mut Reader<'a>) -> Result<()>) -> Result<()> {
    let mut r = Reader::new(bytes);
    for _ in 0..r.map_len()? {
        let name = r.str()?;
        field(name, &mut r)?;
    }
    Ok(())
}

fn strings<'a>(r: &mut Reader<'a>) -> Result<Vec<&'a [u8]>> {
    let n = r.array_len()?;
    let mut out = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        out.push(r.str()?);
    }
    Ok(out)
}

fn ratelimits<'a>(r: &mut Reader<'a>) -> Result<Vec<RatelimitDef<'a>>> {
    let n = r.array_len()?;
    let mut out = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        let mut def = RatelimitDef { id: b"", name: b"", limit: 0, duration_ms: 0, auto_apply: false };
        for _ in 0..r.map_len()? {
            match r.str()? {
                b"id" => def.id = r.str()?,
                b"name" => def.name = r.str()?,
                b"limit" => def.limit = r.int()?,
                b"durationMs" => def.duration_ms = r.int()?,
                b"autoApply" => def.auto_apply = r.bool()?,
                _ => r.skip()?,
            }
        }
        out.push(def);
    }
    Ok(out)
}

pub fn key(bytes: &[u8]) -> Result<KeyRecord<'_>> {
    let mut k = KeyRecord::default();
    fields(bytes, |name, r| {
        match name {
            b"id" => k.id = r.str()?,
            b"apiId" => k.api_id = r.str()?,
            b"workspaceId" => k.workspace_id = r.str()?,
            b"enabled" => k.enabled = r.bool()?,
            b"name" => k.name = r.str_or_nil()?,
            b"expiresAtMs" => k.expires_at_ms = r.int_or_nil()?,
            b"identityId" => k.identity_id = r.str_or_nil()?,
            b"metaJson" => k.meta_json = r.str_or_nil()?,
            b"permissions" => k.permissions = strings(r)?,
            b"roleIds" => k.role_ids = strings(r)?,
            b"ratelimits" => k.ratelimits = ratelimits(r)?,
            _ => r.skip()?,
        }
        Ok(())
    })?;
    Ok(k)
}

pub fn api(bytes: &[u8]) -> Result<ApiRecord<'_>> {
    let mut a = ApiRecord::default();
    fields(bytes, |name, r| {
        match name {
            b"workspaceId" => a.workspace_id = r.str()?,
            b"deletedAtMs" => a.deleted = !r.is_nil()?,
            _ => r.skip()?,
        }
        Ok(())
    })?;
    Ok(a)
}

pub fn role(bytes: &[u8]) -> Result<RoleRecord<'_>> {
    let mut role = RoleRecord::default();
    fields(bytes, |name, r| {
        match name {
            b"name" => role.name = r.str()?,
            b"permissions" => role.permissions = strings(r)?,
            _ => r.skip()?,
        }
        Ok(())
    })?;
    Ok(role)
}

pub fn identity(bytes: &[u8]) -> Result<IdentityRecord<'_>> {
    let mut i = IdentityRecord::default();
    fields(bytes, |name, r| {
        match name {
            b"id" => i.id = r.str()?,
            b"externalId" => i.external_id = r.str()?,
            b"metaJson" => i.meta_json = r.str_or_nil()?,
            b"ratelimits" => i.ratelimits = ratelimits(r)?,
            _ => r.skip()?,
        }
        Ok(())
    })?;
    Ok(i)
}

/// The id of a ratelimit_namespaces value (key `<workspaceId>/<storage_id(name)>`).
pub fn namespace_id(bytes: &[u8]) -> Result<&[u8]> {
    Ok(namespace(bytes)?.0)
}

/// The id and the name of a ratelimit_namespaces value.
pub fn namespace(bytes: &[u8]) -> Result<(&[u8], &[u8])> {
    let (mut id, mut ns_name): (&[u8], &[u8]) = (b"", b"");
    fields(bytes, |name, r| {
        match name {
            b"id" => id = r.str()?,
            b"name" => ns_name = r.str()?,
            _ => r.skip()?,
        }
        Ok(())
    })?;
    Ok((id, ns_name))
}

/// ratelimit_overrides value. Keys: `<namespaceId>/e/<sid>` (exact identifiers) and
/// `<namespaceId>/w/<sid>` (identifiers with `*`, matched as patterns), where sid is
/// `storage_id(identifier)`.
#[derive(Debug, Default)]
pub struct OverrideRecord<'a> {
    pub id: &'a [u8],
    pub identifier: &'a [u8],
    pub limit: i64,
    pub duration_ms: i64,
}

pub fn override_record(bytes: &[u8]) -> Result<OverrideRecord<'_>> {
    let mut o = OverrideRecord::default();
    fields(bytes, |name, r| {
        match name {
            b"id" => o.id = r.str()?,
            b"identifier" => o.identifier = r.str()?,
            b"limit" => o.limit = r.int()?,
            b"durationMs" => o.duration_ms = r.int()?,
            _ => r.skip()?,
        }
        Ok(())
    })?;
    Ok(o)
}
