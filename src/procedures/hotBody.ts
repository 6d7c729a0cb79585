import { RawBody } from '../domain/rawJson.js';
import { noteHotEffect } from '../store/durability.js';

/**
 * The reply of a hot native call made with the request id (verifyKey, limit and their
 * body-reading forms): the effect flag (see noteHotEffect), then the whole success envelope.
 */
export function hotBody(out: string): RawBody {
  noteHotEffect(out.charCodeAt(0));
  return new RawBody(out.slice(1));
}
