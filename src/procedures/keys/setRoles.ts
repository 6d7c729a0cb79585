import type { Ctx } from '../context.js';
import type { RoleView } from '../permissions/view.js';
import { assignRoles } from './assign.js';

export function setRoles(input: { keyId: string; roles: string[] }, ctx: Ctx): RoleView[] {
  return assignRoles('set', input, ctx);
}
