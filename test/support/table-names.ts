import { randomBytes } from "node:crypto";

let counter = 0;
// Per-process salt: process id plus random bits, so parallel workers and reruns never collide.
const salt = `${process.pid.toString(36)}${randomBytes(4).readUInt32BE(0).toString(36)}`;

/** Returns a fresh valid Azure table name (letters and digits, 3-63 chars) unique across processes. */
export function uniqueTableName(prefix = "t"): string {
  if (!/^[A-Za-z][A-Za-z0-9]*$/.test(prefix)) {
    throw new Error(
      `Table name prefix must start with a letter and hold only letters and digits: '${prefix}'`,
    );
  }
  counter += 1;
  const name = `${prefix}${salt}${Date.now().toString(36)}${counter.toString(36)}`;
  // Keep the unique tail when a long prefix would exceed the 63-character limit.
  return name.length <= 63 ? name : name.slice(0, 1) + name.slice(name.length - 62);
}

let prefixes = 0;

/** A table prefix no other test (or process) uses, so each test has its own tables (`prefix` + tail). */
export function uniquePrefix(prefix = "t"): string {
  prefixes += 1;
  return `${prefix}${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}${prefixes}`;
}
