// permissions.* request and response schemas (reference/unkey-v2.md §1.4: slugs and role
// names 1–128 characters).
import { cursorField, emptyObject, object, pageLimit, type JsonSchema } from './common.js';
import { permissionResponse, permissionSlug, permissionsResponse, roleName, roleResponse } from './keys.js';

const permissionName: JsonSchema = { type: 'string', minLength: 1, maxLength: 512 };
const description: JsonSchema = { type: 'string', maxLength: 512 };
const slugList: JsonSchema = { type: 'array', maxItems: 1000, items: permissionSlug() };
const search: JsonSchema = { type: 'string', maxLength: 256, description: 'case-insensitive substring filter' };
const listRequest = object({ limit: pageLimit(100, 100), cursor: cursorField, search });

export const createPermissionRequest = object({ name: permissionName, slug: permissionSlug(), description }, ['name', 'slug']);
export const createPermissionResponse: JsonSchema = {
  type: 'object',
  properties: { permissionId: { type: 'string' }, ...(permissionResponse.properties as Record<string, JsonSchema>) },
  required: ['permissionId', 'id', 'name', 'slug'],
};

export const getPermissionRequest = object({ permission: { ...permissionSlug(), description: 'permission id or slug' } }, ['permission']);
export const listPermissionsRequest = listRequest;
export const deletePermissionRequest = getPermissionRequest;

export const createRoleRequest = object({ name: roleName(), description, permissions: slugList }, ['name']);
export const createRoleResponse: JsonSchema = {
  type: 'object',
  properties: { roleId: { type: 'string' }, ...(roleResponse.properties as Record<string, JsonSchema>) },
  required: ['roleId', 'id', 'name'],
};

export const getRoleRequest = object({ role: { ...roleName(), description: 'role id or name' } }, ['role']);
export const listRolesRequest = listRequest;
export const deleteRoleRequest = getRoleRequest;

// roleId as Unkey bounds it (reference §4: 3–255, letters, digits, `_`, `-`); a role name of
// that form is looked up too.
const roleIdField: JsonSchema = { type: 'string', minLength: 3, maxLength: 255, pattern: '^[a-zA-Z0-9_-]+$', description: 'role id (or a role name of the same form)' };
export const setRolePermissionsRequest = object({ roleId: roleIdField, permissions: slugList }, ['roleId', 'permissions']);

export { permissionResponse, permissionsResponse, roleResponse, emptyObject };
