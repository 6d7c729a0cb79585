import { draftImport, writeImport, type ImportTask, type MigrateKeysInput, type MigrateKeysResult } from '../../edits/importKeys.js';
import type { Ctx } from '../../request/context.js';

export type { MigrateKeysInput, MigrateKeysResult };

/** The module that does the work on a pool thread (edits/importKeys.ts `run`). */
const IMPORT = new URL('../../edits/importKeys.js', import.meta.url);

/** Every key of the call in one transaction: all of them are written, or (an error) none. */
export async function migrateKeys(input: MigrateKeysInput, ctx: Ctx): Promise<MigrateKeysResult> {
  const ws = ctx.principal.workspaceId;
  const task: Omit<ImportTask, 'store'> = { input, workspaceId: ws, nowMs: ctx.nowMs };
  const elsewhere = ctx.transactElsewhere<MigrateKeysResult>(IMPORT, task);
  if (elsewhere !== undefined) return elsewhere;
  const drafts = draftImport(input, ws, ctx.nowMs);
  return ctx.transact(() => writeImport(ws, input.apiId, drafts, ctx.nowMs));
}
