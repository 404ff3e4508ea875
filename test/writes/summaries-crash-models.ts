// Imported from its module (not the package index) so the crash writer starts without loading more than it needs.
import { Column, Entity } from "../../src/schema/decorators.js";

/** The summaries crash test's entity: a count and two sums (Int32 and Int64) per team. */
@Entity({
  table: "KillStaff",
  type: "KillMember",
  partitionKey: "{team}",
  rowKey: "id_{id:4}",
  summaries: {
    perTeam: { rowKey: "summary", count: "members", sum: { salary: "payroll", bonus: "bonuses" } },
  },
})
export class KillMember {
  @Column({ type: "String" }) team!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "Int32" }) salary!: number;
  @Column({ type: "Int64" }) bonus?: bigint;
}

/** The teams (partitions) the writer spreads over. */
export const KILL_TEAMS = ["Hot", "Cold"] as const;

/** A member whose values follow from its key and a version. */
export function killMember(team: string, id: number, version: number): KillMember {
  return Object.assign(new KillMember(), {
    team,
    id,
    salary: 100 + ((id * 7 + version) % 900),
    ...(version % 3 === 0 ? {} : { bonus: BigInt(id) * 1_000_000_000_000n + BigInt(version) }),
  });
}
