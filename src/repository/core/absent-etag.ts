/**
 * An ETag no stored row can have (Timestamps, which ETags are made of, are never of the year 1601): a
 * delete or update planned from "the entity is absent" is sent conditional on it, so it fails with the
 * service's 404 while the entity stays absent, and with 412 if it appeared meanwhile (the write was
 * planned from a state that no longer holds, and is planned again). Sent as `"*"`, it would change a
 * row its copies and summary delta know nothing of.
 */
export const ABSENT_ETAG = `W/"datetime'1601-01-01T00%3A00%3A00.0000000Z'"`;
