import { type DynamicModule, Module } from "@nestjs/common";
import { TableKitModule, type TableKitModuleOptions } from "tablekit/nestjs";
import { Employee } from "./employee.entity.js";
import { EmployeesController } from "./employees.controller.js";
import { EmployeesService } from "./employees.service.js";

/** The feature module: its repositories come from `forFeature`. */
@Module({
  imports: [TableKitModule.forFeature([Employee])],
  providers: [EmployeesService],
  controllers: [EmployeesController],
  exports: [EmployeesService],
})
export class EmployeesModule {}

/** The application: one `TableContext` for all of it (`forRoot`), closed with the application. */
@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest module is a class; its dynamic modules come from static methods
export class AppModule {
  static forRoot(options: TableKitModuleOptions): DynamicModule {
    return { module: AppModule, imports: [TableKitModule.forRoot(options), EmployeesModule] };
  }
}
