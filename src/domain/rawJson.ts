/** `data` that is already JSON text (the native engine writes its replies itself). */
export class RawJson {
  constructor(readonly text: string) {}
}
