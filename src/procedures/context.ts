import type { Principal } from '../auth/permissions.js';
import type { Page } from '../domain/cursor.js';

/** What every handler receives besides its validated input. Time is passed in, never read. */
export interface Ctx {
  readonly principal: Principal;
  readonly nowMs: number;
  readonly requestId: string;
  /** KEYWARD_VAULT_KEY, for recoverable keys; undefined when not configured. */
  readonly vaultKey: string | undefined;
}

/** What list handlers return; the dispatcher turns it into `data` + `pagination`. */
export type ListResult<T> = Page<T>;
