// Expiry: `@Entity<T>({ expiresAt })` takes only the Date fields of T; the untyped form checks the class has the field.

import { expectTypeOf } from "vitest";
import { Column, type DateField, Entity } from "../../src/index.js";

class Token {
  owner!: string;
  id!: string;
  issuedAt!: Date;
  validUntil?: Date | undefined;
  uses!: number;
  label?: string;
}

expectTypeOf<DateField<Token>>().toEqualTypeOf<"issuedAt" | "validUntil">();
expectTypeOf<DateField<unknown>>().toEqualTypeOf<string>();

@Entity<Token>({ table: "Tokens", partitionKey: "{owner}", rowKey: "{id}", expiresAt: "validUntil" })
export class ExpiringToken extends Token {}

@Entity<Token>({
  table: "Tokens",
  partitionKey: "{owner}",
  rowKey: "{id}",
  // @ts-expect-error a number field cannot say when an entity expires
  expiresAt: "uses",
})
export class ExpiresOnANumber extends Token {}

@Entity<Token>({
  table: "Tokens",
  partitionKey: "{owner}",
  rowKey: "{id}",
  // @ts-expect-error not a field of Token
  expiresAt: "validTill",
})
export class ExpiresOnAMissingField extends Token {}

// @ts-expect-error the untyped form: the class has no field 'validTill'
@Entity({ table: "Tokens", partitionKey: "{owner}", rowKey: "{id}", expiresAt: "validTill" })
export class UntypedMissingField {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "DateTime" }) validUntil?: Date;
}
