/**
 * FNV-1a 32-bit hash of a string's UTF-8 bytes (offset basis 0x811c9dc5, prime 0x01000193), as an
 * unsigned 32-bit number. Hash buckets store its value in keys, so this function is part of the stored
 * format and must never change.
 */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    // Math.imul keeps the multiplication exact modulo 2^32.
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
