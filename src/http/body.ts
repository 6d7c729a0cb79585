// Bounded body reads: uWS delivers the body in chunks that are only valid during the
// callback, and has no size limit of its own. Chunks are copied into one buffer that never
// grows past maxBodyBytes.

export class BodyTooLarge extends Error {}

export class BodyReader {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly maxBodyBytes: number) {}

  /** Adds one chunk; throws BodyTooLarge past the limit. Returns the body once `isLast`. */
  push(chunk: ArrayBuffer, isLast: boolean): Buffer | undefined {
    this.size += chunk.byteLength;
    if (this.size > this.maxBodyBytes) throw new BodyTooLarge();
    if (isLast && this.chunks.length === 0) return Buffer.from(new Uint8Array(chunk)); // copies
    this.chunks.push(Buffer.from(new Uint8Array(chunk)));
    return isLast ? Buffer.concat(this.chunks, this.size) : undefined;
  }
}
