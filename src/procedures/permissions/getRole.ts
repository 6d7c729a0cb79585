import { roleFor } from '../../lookups/permissions.js';
import type { Ctx } from '../../request/context.js';
import { roleView, type RoleView } from '../../views/permissions.js';

export function getRole(input: { role: string }, ctx: Ctx): RoleView {
  return roleView(roleFor(ctx, input.role));
}
