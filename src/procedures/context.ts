import type { Principal } from '../auth/permissions.js';

/** What every handler receives besides its validated input. Time is passed in, never read. */
export interface Ctx {
  readonly principal: Principal;
  readonly nowMs: number;
  readonly requestId: string;
}

/** What list handlers return; the dispatcher turns it into `data` + `pagination`. */
export interface ListResult<T> {
  readonly items: T[];
  readonly cursor: string | undefined;
  readonly hasMore: boolean;
}
