/**
 * The example application without HTTP (a Nest application context): `npx tsx examples/nest/main.ts`
 * runs it on Azurite when `TABLES` is `UseDevelopmentStorage=true`, else in memory.
 */
import "reflect-metadata";
import { NestFactory } from "@nestjs/core";
import { MemoryStore } from "tablekit";
import { AppModule } from "./app.module.js";
import { EmployeesService } from "./employees.service.js";

const tables = process.env.TABLES;
const app = await NestFactory.createApplicationContext(
  AppModule.forRoot(tables ? { connectionString: tables } : { store: new MemoryStore() }),
  { logger: false },
);
const service = app.get(EmployeesService);
await service.ensureTables();
await service.hire({ department: "Sales", employeeId: 7, name: "Ada", email: "ada@example.com" });
console.log(await service.byEmail("Sales", "ada@example.com"));
await app.close(); // closes the TableContext (its repair workers stop)
