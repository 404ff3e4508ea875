import { Column, Entity } from "../../src/index.js";

/** The large-value crash test's entity: two large columns whose values follow from `version`. */
@Entity({ table: "CrashDocs", partitionKey: "{folder}", rowKey: "{name}" })
export class CrashDoc {
  @Column({ type: "String" }) folder!: string;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Int32" }) version!: number;
  @Column({ type: "String", large: true }) text?: string;
  @Column({ type: "Binary", large: true }) content?: Uint8Array;
}

/** The keys the writer touches: few, so writes replace and delete each other's values often. */
export const CRASH_DOC_KEYS: ReadonlyArray<readonly [string, string]> = [
  ["a", "one"],
  ["a", "two"],
  ["b", "one"],
];

/** The document of a version: every value follows from it, so a mix of two versions shows. */
export function crashDoc(folder: string, name: string, version: number): CrashDoc {
  const content =
    version % 3 === 0
      ? undefined
      : Uint8Array.from({ length: (version % 7) * 1000 + 1 }, (_, i) => (version * 7 + i) % 256);
  return Object.assign(new CrashDoc(), {
    folder,
    name,
    version,
    text: `v${version} ${"é🚀".repeat((version % 5) * 300)}`,
    ...(content === undefined ? {} : { content }),
  });
}
