import { expectTypeOf } from "vitest";
import {
  type BlindIndexOptions,
  Column,
  type EncryptionOptions,
  Entity,
  type KeyResolver,
  localKeys,
  MemoryStore,
  type ReencryptResult,
  type SasOptions,
  TableContext,
} from "../../src/index.js";

@Entity({ table: "Secrets", partitionKey: "{owner}", rowKey: "{name}" })
class Secret {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "String" }) name!: string;
  // Any column type may be encrypted; the field keeps its type.
  @Column({ type: "String", encrypt: true }) value!: string;
  @Column({ type: "Int64", encrypt: true }) pin?: bigint;
  @Column({ type: "Json", encrypt: true }) extra?: { hint: string };
  // @ts-expect-error encrypt is a boolean
  @Column({ type: "String", encrypt: "yes" }) wrong?: string;
  // @ts-expect-error the field type must still fit the column type
  @Column({ type: "Int32", encrypt: true }) mismatched?: string;
  // A blind index: true, or { bits, expectedRows }.
  @Column({ type: "String", encrypt: true, blindIndex: true }) email?: string;
  @Column({ type: "Int32", encrypt: true, blindIndex: { bits: 8, expectedRows: 300 } }) badge?: number;
  // @ts-expect-error bits is a number
  @Column({ type: "Guid", encrypt: true, blindIndex: { bits: "8" } }) device?: string;
}

const blindOptions: BlindIndexOptions = { bits: 12 };
expectTypeOf(blindOptions.expectedRows).toEqualTypeOf<number | undefined>();

const keys = localKeys({ k1: new Uint8Array(32) }, "k1");
expectTypeOf(keys).toEqualTypeOf<KeyResolver>();
// A resolver may be async (a key service) or not.
const asyncKeys: KeyResolver = {
  currentKeyId: "k1",
  wrapKey: async (_keyId, dataKey) => dataKey,
  unwrapKey: async (_keyId, wrapped) => wrapped,
};
const options: EncryptionOptions = { keys: asyncKeys, blindIndexKey: new Uint8Array(32) };
const rotating: EncryptionOptions = {
  keys: asyncKeys,
  blindIndexKey: new Uint8Array(32),
  previousBlindIndexKeys: [new Uint8Array(32)],
};
// @ts-expect-error the blind-index key is bytes
const wrongKey: EncryptionOptions = { keys: asyncKeys, blindIndexKey: "secret" };
const db = new TableContext({ store: new MemoryStore(), encryption: options, tablePrefix: undefined });
new TableContext({ store: new MemoryStore(), encryption: undefined });
// @ts-expect-error the option holds a resolver under `keys`
new TableContext({ store: new MemoryStore(), encryption: keys });

expectTypeOf(db.reencrypt(Secret, { scan: true })).resolves.toEqualTypeOf<ReencryptResult>();
new TableContext({ store: new MemoryStore(), encryption: rotating, tablePrefix: wrongKey ? "x" : "y" });
// A blind-indexed column is filtered on by equality, its value typed by the field.
db.repository(Secret).find({ owner: "ann" }).where("email", "eq", "ann@example.com");
db.repository(Secret).find({ owner: "ann" }).where({ badge: 7 });
// @ts-expect-error the value keeps the field's type
db.repository(Secret).find({ owner: "ann" }).where({ badge: "7" });
// @ts-expect-error the table scan must be confirmed
db.reencrypt(Secret, { scan: false });
// @ts-expect-error the table scan must be confirmed
db.reencrypt(Secret, {});

const secrets = db.repository(Secret);
expectTypeOf(
  secrets.sasFor({ owner: "ann" }, { permissions: "r", expiresOn: new Date() }),
).toEqualTypeOf<string>();
secrets.sasFor({ owner: "ann" }, { permissions: "raud", expiresOn: new Date(), startsOn: undefined });
// @ts-expect-error permissions are one of r, ra, rau, raud
secrets.sasFor({ owner: "ann" }, { permissions: "w", expiresOn: new Date() });
// @ts-expect-error expiresOn is required
secrets.sasFor({ owner: "ann" }, { permissions: "r" });
const sas: SasOptions = { permissions: "ra", expiresOn: new Date() };
secrets.sasFor({ owner: "ann" }, sas);
