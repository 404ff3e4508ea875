import { Inject, Injectable, Module } from "@nestjs/common";
import { Test } from "@nestjs/testing";
import { describe, expect, it } from "vitest";
import { Column, Entity, MemoryStore, Repository, TableContext, ValidationError } from "../../src/index.js";
import {
  getRepositoryToken,
  InjectRepository,
  InjectTableContext,
  TABLE_CONTEXT,
  TableKitModule,
} from "../../src/nestjs/index.js";
import { ManualTimers } from "../eventual/manual-timers.js";

@Entity({ table: "NestModuleEmployees", partitionKey: "{department}", rowKey: "{employeeId:6}" })
class Employee {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) name!: string;
}

/** A provider that injects the repository by its token, as the held-out check does. */
@Injectable()
class ByToken {
  constructor(@Inject(getRepositoryToken(Employee)) readonly employees: Repository<Employee>) {}
}

/** The same through the decorators. */
@Injectable()
class ByDecorator {
  constructor(
    @InjectRepository(Employee) readonly employees: Repository<Employee>,
    @InjectTableContext() readonly db: TableContext,
  ) {}
}

describe("TableKitModule", () => {
  it("forRoot({ store }) + forFeature([Employee]): a provider writes and reads; closing the module stops the context's workers", async () => {
    const store = new MemoryStore();
    const moduleRef = await Test.createTestingModule({
      imports: [TableKitModule.forRoot({ store }), TableKitModule.forFeature([Employee])],
      providers: [ByToken, ByDecorator],
    }).compile();
    const { employees } = moduleRef.get(ByToken);
    const viaDecorators = moduleRef.get(ByDecorator);
    const db = moduleRef.get<TableContext>(TABLE_CONTEXT);
    expect(db).toBeInstanceOf(TableContext);
    expect(viaDecorators.db).toBe(db);
    expect(db.store).toBe(store);
    // One context: the repositories are the context's own.
    expect(employees).toBeInstanceOf(Repository);
    expect(viaDecorators.employees).toBe(employees);
    expect(db.repository(Employee)).toBe(employees);

    await db.ensureTables(Employee);
    await employees.insert(employees.create({ department: "Sales", employeeId: 7, name: "Ada" }));
    expect(await employees.get({ department: "Sales", employeeId: 7 })).toMatchObject({ name: "Ada" });
    expect((await employees.find({ department: "Sales" }).toArray()).map((e) => e.employeeId)).toEqual([7]);

    const timers = new ManualTimers();
    db.startRepairWorker({ intervalMs: 60_000, timers });
    expect(timers.waiting).toEqual([0]);
    await moduleRef.close();
    // The worker was stopped: its first pass will never run.
    expect(timers.waiting).toEqual([]);
  });

  it("forRootAsync: a factory with imports and inject makes the options", async () => {
    const store = new MemoryStore();
    const STORE = Symbol("store");
    @Module({ providers: [{ provide: STORE, useValue: store }], exports: [STORE] })
    class ConfigModule {}
    let calls = 0;
    const moduleRef = await Test.createTestingModule({
      imports: [
        TableKitModule.forRootAsync({
          imports: [ConfigModule],
          inject: [STORE],
          useFactory: async (given: MemoryStore) => {
            calls++;
            return { store: given, tablePrefix: "nestasync" };
          },
        }),
        TableKitModule.forFeature([Employee]),
      ],
      providers: [ByToken],
    }).compile();
    expect(calls).toBe(1);
    const { employees } = moduleRef.get(ByToken);
    expect(employees.table).toBe("nestasyncNestModuleEmployees");
    await moduleRef.get<TableContext>(TABLE_CONTEXT).ensureTables(Employee);
    await employees.upsert(employees.create({ department: "Ops", employeeId: 1, name: "Lin" }));
    expect(await store.getEntity("nestasyncNestModuleEmployees", "Ops", "000001")).toBeDefined();
    await moduleRef.close();
  });

  it("forRoot({ connectionString }) makes an AzureStore", async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [TableKitModule.forRoot({ connectionString: "UseDevelopmentStorage=true", tracing: false })],
    }).compile();
    expect(moduleRef.get<TableContext>(TABLE_CONTEXT).store.name).toBe("azure");
    await moduleRef.close();
  });

  it("refuses options without a store or a connection string, and forFeature without an array", async () => {
    const compiling = Test.createTestingModule({
      imports: [TableKitModule.forRoot({ connectionString: "" })],
    }).compile();
    await expect(compiling).rejects.toBeInstanceOf(ValidationError);
    expect(() => TableKitModule.forFeature(Employee as never)).toThrow(ValidationError);
    expect(() => TableKitModule.forRootAsync({} as never)).toThrow(ValidationError);
  });

  it("gives each entity class its own token", () => {
    @Entity({ table: "NestOther", partitionKey: "{a}", rowKey: "{b}" })
    class Employee2 {
      @Column({ type: "String" }) a!: string;
      @Column({ type: "String" }) b!: string;
    }
    expect(getRepositoryToken(Employee)).toBe(getRepositoryToken(Employee));
    expect(getRepositoryToken(Employee)).not.toBe(getRepositoryToken(Employee2));
  });
});
