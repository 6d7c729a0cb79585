// First start on an empty data dir: a default workspace and a root key allowed `*`.
// The key comes from KEYWARD_ROOT_KEY, else it is generated and printed once (only its
// hash is stored, so it cannot be shown again).
import { newId } from './domain/ids.js';
import { getText, putRecord, putText, transact } from './store/db.js';
import { insertRootKey, generateRootKey } from './store/rootKeys.js';
import { META_BOOTSTRAPPED, type WorkspaceRecord } from './store/records.js';

export interface Bootstrapped {
  workspaceId: string;
  rootKeyId: string;
  /** Set only when the key was generated here and must be shown to the operator. */
  generatedKey: string | undefined;
}

export function bootstrap(configuredKey: string | undefined, nowMs: number): Bootstrapped | undefined {
  return transact(() => {
    if (getText('meta', META_BOOTSTRAPPED) !== undefined) return undefined;
    const ws: WorkspaceRecord = { id: newId('ws', nowMs), createdAtMs: nowMs };
    putRecord('workspaces', ws.id, ws);
    const key = configuredKey ?? generateRootKey();
    const rk = insertRootKey(ws.id, key, ['*'], nowMs);
    putText('meta', META_BOOTSTRAPPED, String(nowMs));
    return { workspaceId: ws.id, rootKeyId: rk.id, generatedKey: configuredKey === undefined ? key : undefined };
  });
}
