/**
 * `tablekit/nestjs`: the NestJS module. `@nestjs/common` and `@nestjs/core` are optional peer
 * dependencies of tablekit, loaded only through this entry.
 */
export {
  type TableKitConnectionOptions,
  TableKitCoreModule,
  TableKitModule,
  type TableKitModuleAsyncOptions,
  type TableKitModuleOptions,
} from "./table-kit-module.js";
export {
  getRepositoryToken,
  InjectRepository,
  InjectTableContext,
  TABLE_CONTEXT,
  TABLE_KIT_OPTIONS,
} from "./tokens.js";
