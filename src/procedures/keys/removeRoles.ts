import type { Ctx } from '../context.js';
import type { RoleView } from '../permissions/view.js';
import { assignRoles } from './assign.js';

export function removeRoles(input: { keyId: string; roles: string[] }, ctx: Ctx): RoleView[] {
  return assignRoles('remove', input, ctx);
}
