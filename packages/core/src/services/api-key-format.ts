/**
 * @module The format of the API keys Parley generates: `prl_` + 30 random base62 characters + a
 * 6-character base62 CRC32 checksum, so a mistyped or truncated key is recognised without a lookup.
 */
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/** Prefix of every generated key, which also makes keys easy to spot by secret scanners. */
export const API_KEY_PREFIX = 'prl_';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 30 base62 characters: about 178 bits of randomness. */
const RANDOM_LENGTH = 30;
/** 62^6 > 2^32: six base62 digits hold any CRC32. */
const CHECKSUM_LENGTH = 6;

/** Length of a checksummed key: `prl_` + 30 + 6 = 40 characters. Keys of the earlier format are 47. */
export const CHECKSUMMED_KEY_LENGTH = API_KEY_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH;

const CHECKSUMMED = new RegExp(`^${API_KEY_PREFIX}([0-9A-Za-z]{${RANDOM_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);

/** CRC32 (ISO-HDLC, as zlib and PNG) of `random`'s ASCII bytes, as 6 base62 digits, zero-padded. */
function checksum(random: string): string {
  let value = crc32(random);
  let digits = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i += 1) {
    digits = BASE62[value % 62] + digits;
    value = Math.floor(value / 62);
  }
  return digits;
}

/** `length` uniformly random base62 characters (bytes ≥ 248 are rejected, so no character is favoured). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/**
 * A new raw key: `prl_` + 30 random base62 characters + their CRC32 in 6 base62 characters
 * (40 characters in all, letters and digits only after the prefix) — the scheme of GitHub's
 * tokens. The checksum is not a secret and adds no strength; it lets {@link apiKeyChecksumFails}
 * refuse a mistyped or truncated key before any store lookup.
 */
export function generateApiKey(): string {
  const random = randomBase62(RANDOM_LENGTH);
  return `${API_KEY_PREFIX}${random}${checksum(random)}`;
}

/**
 * True when `key` claims the checksummed format — it starts with `prl_` and is exactly
 * {@link CHECKSUMMED_KEY_LENGTH} characters long — but is not made of base62 characters or its
 * checksum does not match. False for valid checksummed keys and for every key of another shape:
 * keys generated before the checksum (`prl_` + 43 base64url characters) and keys chosen by
 * operators in `API_KEYS` are looked up as before.
 */
export function apiKeyChecksumFails(key: string): boolean {
  if (!key.startsWith(API_KEY_PREFIX) || key.length !== CHECKSUMMED_KEY_LENGTH) return false;
  const match = CHECKSUMMED.exec(key);
  return !match || checksum(match[1]!) !== match[2];
}
