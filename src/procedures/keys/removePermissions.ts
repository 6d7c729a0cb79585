import type { Ctx } from '../../request/context.js';
import type { PermissionView } from '../../views/permissions.js';
import { assignPermissions } from '../../edits/keyAssignments.js';

export function removePermissions(input: { keyId: string; permissions: string[] }, ctx: Ctx): Promise<PermissionView[]> {
  return assignPermissions('remove', input, ctx);
}
