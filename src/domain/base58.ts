// Bitcoin base58 alphabet. It is in ASCII order, so fixed-width encodings of equal-length
// byte strings sort like the numbers they encode (ids rely on this).
export const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Plain base58 (leading zero bytes become '1'), as Unkey encodes key material. */
export function base58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  const digits: number[] = [];
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i] ?? 0;
    for (let j = 0; j < digits.length; j++) {
      carry += (digits[j] ?? 0) << 8;
      digits[j] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  let out = '1'.repeat(zeros);
  for (let i = digits.length - 1; i >= 0; i--) out += BASE58_ALPHABET[digits[i] ?? 0];
  return out;
}

/** Fixed-width base58: left-padded with '1' to the width of the largest value of that length. */
export function base58Fixed(bytes: Uint8Array): string {
  const width = Math.ceil((bytes.length * 8) / Math.log2(58));
  const plain = base58(bytes).replace(/^1+/, '');
  return plain.padStart(width, '1');
}
