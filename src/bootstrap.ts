// First start on an empty data dir: a default workspace and a root key allowed `*`.
// The key comes from KEYWARD_ROOT_KEY, else it is generated and printed once (only its
// hash is stored, so it cannot be shown again). A data dir that already holds a workspace
// (set up through the CLI before the first start) is not empty: nothing is added to it.
import { getText, putText, scanPrefix } from './store/db.js';
import { createWorkspace, findRootKeyByHash, generateRootKey, hashRootKey, insertRootKey } from './store/rootKeys.js';
import { META_BOOTSTRAPPED } from './store/records.js';

export interface Bootstrapped {
  workspaceId: string;
  rootKeyId: string;
  /** Set only when the key was generated here and must be shown to the operator. */
  generatedKey: string | undefined;
}

/** What start-up should tell the operator about a store it did not bootstrap. */
export type NotBootstrapped = 'ok' | 'no_root_key' | 'configured_key_unknown';

/** Bootstraps an empty store, inside the caller's transaction (it may run more than once). */
/** Whether the store was bootstrapped (or holds a workspace): bootstrap then only reads. */
export function isBootstrapped(): boolean {
  return getText('meta', META_BOOTSTRAPPED) !== undefined || scanPrefix('workspaces', '', undefined, 1).length > 0;
}

export function bootstrap(configuredKey: string | undefined, nowMs: number): Bootstrapped | NotBootstrapped {
  if (isBootstrapped()) {
    if (scanPrefix('root_keys', '', undefined, 1).length === 0) return 'no_root_key';
    if (configuredKey !== undefined && findRootKeyByHash(hashRootKey(configuredKey)) === undefined) return 'configured_key_unknown';
    return 'ok';
  }
  const ws = createWorkspace(nowMs);
  const key = configuredKey ?? generateRootKey();
  const rk = insertRootKey(ws.id, key, ['*'], nowMs);
  putText('meta', META_BOOTSTRAPPED, String(nowMs));
  return { workspaceId: ws.id, rootKeyId: rk.id, generatedKey: configuredKey === undefined ? key : undefined };
}
