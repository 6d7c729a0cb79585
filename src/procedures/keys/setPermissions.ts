import type { Ctx } from '../context.js';
import type { PermissionView } from '../permissions/view.js';
import { assignPermissions } from './assign.js';

export function setPermissions(input: { keyId: string; permissions: string[] }, ctx: Ctx): PermissionView[] {
  return assignPermissions('set', input, ctx);
}
