/**
 * Type tests: the classes a context hands out cannot be constructed by users (their constructors
 * take tablekit's internals); the compiler says so instead of a crash at run time.
 */
import {
  IndexLookup,
  MultiEntityQuery,
  MultiEntitySource,
  Query,
  Repository,
  Transaction,
} from "../../src/index.js";

export function constructionIsPrivate(): void {
  // @ts-expect-error a repository comes from db.repository(Entity)
  new Repository();
  // @ts-expect-error a query comes from repository.find() / scan()
  new Query();
  // @ts-expect-error an index lookup comes from repository.index(name)
  new IndexLookup();
  // @ts-expect-error a multi-entity source comes from db.query(A, B)
  new MultiEntitySource();
  // @ts-expect-error a multi-entity query comes from db.query(A, B).find() / scan()
  new MultiEntityQuery();
  // @ts-expect-error a transaction comes from db.transaction(tx => …)
  new Transaction();
}
