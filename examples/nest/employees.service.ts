import { Injectable } from "@nestjs/common";
import type { Repository, TableContext } from "tablekit";
import { InjectRepository, InjectTableContext } from "tablekit/nestjs";
import { Employee } from "./employee.entity.js";

/** What a service over tablekit looks like: repositories and the context are injected by token. */
@Injectable()
export class EmployeesService {
  constructor(
    @InjectRepository(Employee) private readonly employees: Repository<Employee>,
    @InjectTableContext() private readonly db: TableContext,
  ) {}

  /** Creates the tables (once, at start-up or in a migration step). */
  async ensureTables(): Promise<void> {
    await this.db.ensureTables(Employee);
  }

  hire(values: Pick<Employee, "department" | "employeeId" | "name" | "email">): Promise<Employee> {
    return this.employees.insert(this.employees.create(values));
  }

  find(department: string, employeeId: number): Promise<Employee | undefined> {
    return this.employees.get({ department, employeeId });
  }

  byEmail(department: string, email: string): Promise<Employee | undefined> {
    return this.employees.index("byEmail").get({ department, email });
  }

  list(department: string): Promise<Employee[]> {
    return this.employees.find({ department }).toArray();
  }

  /** Renames an employee: read, change, write back conditional on the ETag it was read with. */
  async rename(department: string, employeeId: number, name: string): Promise<Employee> {
    const employee = await this.employees.getOrThrow({ department, employeeId });
    employee.name = name;
    return this.employees.update(employee);
  }
}
