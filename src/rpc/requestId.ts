import { native } from '../engine/native.js';

/**
 * A new request id, `req_` + 16 alphanumerics, from this thread's sequence in the native
 * module (native/src/reqid.rs), which the hot calls answered from the body bytes draw their
 * ids from too: unique within a thread's run, unpredictable across runs.
 */
export function newRequestId(): string {
  return native.requestId();
}
