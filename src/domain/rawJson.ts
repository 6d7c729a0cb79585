/** `data` that is already JSON text (the native engine writes its replies itself). */
export class RawJson {
  constructor(readonly text: string) {}
}

/**
 * A whole success body already written as JSON text, meta.requestId included: the native
 * hot calls write the envelope themselves when given the request id (the same bytes as
 * rpc/envelope.ts successBody; test/engine/envelope.test.ts compares them).
 */
export class RawBody {
  constructor(readonly text: string) {}
}
