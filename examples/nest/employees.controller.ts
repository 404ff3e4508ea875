import { Body, Controller, Get, Inject, NotFoundException, Param, ParseIntPipe, Post } from "@nestjs/common";
import type { Employee } from "./employee.entity.js";
import { EmployeesService } from "./employees.service.js";

/** HTTP routes over the service (add `@nestjs/platform-express` to serve them). */
@Controller("departments/:department/employees")
export class EmployeesController {
  // `@Inject(EmployeesService)`: the token named, so no decorator metadata is needed.
  constructor(@Inject(EmployeesService) private readonly service: EmployeesService) {}

  @Post()
  hire(
    @Param("department") department: string,
    @Body() body: Pick<Employee, "employeeId" | "name" | "email">,
  ): Promise<Employee> {
    return this.service.hire({ ...body, department });
  }

  @Get()
  list(@Param("department") department: string): Promise<Employee[]> {
    return this.service.list(department);
  }

  @Get(":employeeId")
  async get(
    @Param("department") department: string,
    @Param("employeeId", ParseIntPipe) employeeId: number,
  ): Promise<Employee> {
    const employee = await this.service.find(department, employeeId);
    if (employee === undefined) throw new NotFoundException(`no employee ${employeeId} in ${department}`);
    return employee;
  }
}
