import { Inject } from "@nestjs/common";
import type { EntityClass } from "../index.js";

/** The injection token of the module's `TableContext` (`@InjectTableContext()` injects it). */
export const TABLE_CONTEXT: unique symbol = Symbol("tablekit:TableContext");

/** The injection token of the options given to `forRoot`/`forRootAsync`. */
export const TABLE_KIT_OPTIONS: unique symbol = Symbol("tablekit:TableKitModuleOptions");

/** One token per class (a symbol, so two classes of the same name never share one). */
const repositoryTokens = new WeakMap<EntityClass, symbol>();

/**
 * The injection token of an entity's repository, provided by `TableKitModule.forFeature([Entity])`:
 * use it in `@Inject(…)`, a factory's `inject`, or `moduleRef.get(…)`.
 * @example
 * const employees = moduleRef.get<Repository<Employee>>(getRepositoryToken(Employee));
 */
export function getRepositoryToken(entity: EntityClass): symbol {
  let token = repositoryTokens.get(entity);
  if (token === undefined) {
    token = Symbol(`tablekit:Repository<${entity.name}>`);
    repositoryTokens.set(entity, token);
  }
  return token;
}

/**
 * Injects the repository of an entity (registered with `TableKitModule.forFeature([Entity])`).
 * @example
 * constructor(@InjectRepository(Employee) private readonly employees: Repository<Employee>) {}
 */
export function InjectRepository(entity: EntityClass): PropertyDecorator & ParameterDecorator {
  return Inject(getRepositoryToken(entity));
}

/**
 * Injects the module's `TableContext` (for transactions, `eventually`, `repair`, `ensureTables`…).
 * @example
 * constructor(@InjectTableContext() private readonly db: TableContext) {}
 */
export function InjectTableContext(): PropertyDecorator & ParameterDecorator {
  return Inject(TABLE_CONTEXT);
}
