import { Column, Entity } from "../../src/index.js";

/** A sensor reading: 100 sensors (partitions) × many readings, for bulk writes. */
@Entity({ table: "Readings", partitionKey: "{sensor}", rowKey: "r_{seq:6}" })
export class Reading {
  @Column({ type: "String" }) sensor!: string;
  @Column({ type: "Int32" }) seq!: number;
  @Column({ type: "Int32" }) round!: number;
  @Column({ type: "Double" }) value!: number;
  @Column({ type: "String" }) note!: string;
}

export function reading(sensor: number, seq: number, round: number): Reading {
  return Object.assign(new Reading(), {
    sensor: sensorName(sensor),
    seq,
    round,
    value: seq * 1.5 + round * 1000 + 0.25,
    note: `sensor ${sensor} reading ${seq} round ${round}`,
  });
}

export function sensorName(sensor: number): string {
  return `s${String(sensor).padStart(3, "0")}`;
}

/** A counter incremented by concurrent `mutate` calls. */
@Entity({ table: "Counters", partitionKey: "{name}", rowKey: "counter" })
export class Counter {
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Int32" }) count!: number;
}

/** A note with a body, to reach payload limits. */
@Entity({ table: "Notes", partitionKey: "{owner}", rowKey: "{id}" })
export class Note {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) body?: string;
}

export { shuffled } from "../support/seeded-random.js";
