// Recoverable keys: the plaintext is sealed with AES-256-GCM under the key-encryption key
// KEYWARD_VAULT_KEY (32 bytes, base64), a fresh 96-bit IV per key, the keyId as AAD so a
// sealed value cannot be moved to another key.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface Sealed {
  iv: string;
  tag: string;
  data: string;
}

export function seal(vaultKeyB64: string, keyId: string, plaintext: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(vaultKeyB64, 'base64'), iv);
  cipher.setAAD(Buffer.from(keyId, 'utf8'));
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
}

/** undefined when the vault key is not the one the value was sealed with. */
export function open(vaultKeyB64: string, keyId: string, sealed: Sealed): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', Buffer.from(vaultKeyB64, 'base64'), Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(Buffer.from(keyId, 'utf8'));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
