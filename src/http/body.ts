// Bounded body reads: uWS delivers the body in chunks that are only valid during the
// callback, and has no size limit of its own. Chunks are copied into one buffer that never
// grows past maxBodyBytes.

export class BodyTooLarge extends Error {}

export class BodyReader {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly maxBodyBytes: number) {}

  /**
   * Adds one chunk; throws BodyTooLarge past the limit. Returns the body once `isLast`. A
   * body that came in one chunk is returned as a view of uWS's memory, valid only until the
   * onData callback returns (the dispatcher consumes it synchronously).
   */
  push(chunk: ArrayBuffer, isLast: boolean): Uint8Array | undefined {
    this.size += chunk.byteLength;
    if (this.size > this.maxBodyBytes) throw new BodyTooLarge();
    if (isLast && this.chunks.length === 0) return new Uint8Array(chunk);
    this.chunks.push(Buffer.from(new Uint8Array(chunk)));
    return isLast ? Buffer.concat(this.chunks, this.size) : undefined;
  }
}
