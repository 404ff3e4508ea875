const etags = new WeakMap<object, string>();

/** The ETag tablekit last saw for this entity (read or written through a repository), if any. */
export function etagOf(entity: object): string | undefined {
  return etags.get(entity);
}

/** Records the ETag of an entity instance (after a read or a write). */
export function rememberEtag(entity: object, etag: string | undefined): void {
  if (etag) etags.set(entity, etag);
  else etags.delete(entity);
}
