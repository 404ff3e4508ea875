/**
 * The example Nest application (examples/nest/) end to end through `@nestjs/testing`, on each store.
 * The example names every injection token (`@Inject(EmployeesService)`, `@InjectRepository(Employee)`),
 * so it needs no decorator metadata and runs under tsx (esbuild emits none) as under tsc and vitest.
 */
import { NotFoundException } from "@nestjs/common";
import { Test } from "@nestjs/testing";
import { describe, expect, it } from "vitest";
import { AppModule } from "../../examples/nest/app.module.js";
import { EmployeesController } from "../../examples/nest/employees.controller.js";
import { EmployeesService } from "../../examples/nest/employees.service.js";
import { UniqueConstraintError } from "../../src/index.js";
import { expectRejection } from "../support/rejection.js";
import { storeKinds } from "../support/stores.js";
import { uniquePrefix } from "../support/table-names.js";

describe.each(storeKinds.filter((kind) => kind.name !== "serve"))("examples/nest on $name", (kind) => {
  it("hires, reads by key, by e-mail and by department, and closes", async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [AppModule.forRoot({ store: kind.create(), tablePrefix: uniquePrefix("nest") })],
    }).compile();
    await moduleRef.init();
    const service = moduleRef.get(EmployeesService);
    const controller = moduleRef.get(EmployeesController);
    await service.ensureTables();

    await controller.hire("Sales", { employeeId: 7, name: "Ada", email: "ada@example.com" });
    await controller.hire("Sales", { employeeId: 8, name: "Bo", email: "bo@example.com" });
    expect(await controller.get("Sales", 7)).toMatchObject({ name: "Ada", email: "ada@example.com" });
    expect((await service.byEmail("Sales", "bo@example.com"))?.employeeId).toBe(8);
    expect((await controller.list("Sales")).map((e) => e.employeeId)).toEqual([7, 8]);
    await expectRejection(
      controller.hire("Sales", { employeeId: 9, name: "Cy", email: "ada@example.com" }),
      UniqueConstraintError,
    );
    await expectRejection(controller.get("Sales", 99), NotFoundException);
    expect((await service.rename("Sales", 7, "Ada L.")).name).toBe("Ada L.");

    await moduleRef.close();
  });
});
