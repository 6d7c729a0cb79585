import type { Ctx } from '../../request/context.js';
import type { RoleView } from '../../views/permissions.js';
import { assignRoles } from '../../edits/keyAssignments.js';

export function removeRoles(input: { keyId: string; roles: string[] }, ctx: Ctx): Promise<RoleView[]> {
  return assignRoles('remove', input, ctx);
}
