import type { Ctx } from '../../request/context.js';
import type { RoleView } from '../../views/permissions.js';
import { assignRoles } from '../../edits/keyAssignments.js';

export function setRoles(input: { keyId: string; roles: string[] }, ctx: Ctx): Promise<RoleView[]> {
  return assignRoles('set', input, ctx);
}
