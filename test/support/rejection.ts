import { expect } from "vitest";

/** Resolves to the error `promise` rejects with; fails (naming the value) when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(
        `expected a rejection, got ${JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`,
      );
    },
    (error: unknown) => error,
  );
}

/** Resolves to the error `action` throws or rejects with (synchronously or not); fails when it succeeds. */
export async function failureOf(action: () => unknown): Promise<Error> {
  return (await rejectionOf(Promise.resolve().then(action))) as Error;
}

/**
 * Expects `promise` to reject with an instance of `type` whose properties include `properties`
 * (e.g. `{ code: "etag-mismatch" }` or `{ statusCode: 409 }`), and returns that error for further checks.
 */
export async function expectRejection<E extends Error>(
  promise: Promise<unknown>,
  type: abstract new (...args: never[]) => E,
  properties: Partial<Record<keyof E, unknown>> & Record<string, unknown> = {},
): Promise<E> {
  const error = await rejectionOf(promise);
  expect(error).toBeInstanceOf(type);
  if (Object.keys(properties).length > 0) expect(error).toMatchObject(properties);
  return error as E;
}
