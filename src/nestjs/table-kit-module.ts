import {
  type DynamicModule,
  type FactoryProvider,
  Global,
  Inject,
  Module,
  type ModuleMetadata,
  type OnModuleDestroy,
  type Provider,
} from "@nestjs/common";
import {
  AzureStore,
  type AzureStoreOptions,
  type EntityClass,
  TableContext,
  type TableContextOptions,
  ValidationError,
} from "../index.js";
import { getRepositoryToken, TABLE_CONTEXT, TABLE_KIT_OPTIONS } from "./tokens.js";

/** A connection string instead of a store: an `AzureStore` is made from it (with `azure` as its options). */
export interface TableKitConnectionOptions extends Omit<TableContextOptions, "store"> {
  /** An account-key or SAS connection string, or `UseDevelopmentStorage=true` (Azurite). */
  connectionString: string;
  /** Options of the `AzureStore` made from the connection string. */
  azure?: AzureStoreOptions | undefined;
  store?: undefined;
}

/** Options of `TableKitModule.forRoot`: a `TableContextOptions` (with its `store`), or a connection string. */
export type TableKitModuleOptions = TableContextOptions | TableKitConnectionOptions;

/** Options of `TableKitModule.forRootAsync`: a factory of the options, with its imports and injected tokens. */
export interface TableKitModuleAsyncOptions {
  /** Modules whose providers the factory injects (e.g. `ConfigModule`). */
  imports?: ModuleMetadata["imports"];
  /** Tokens whose values are passed to `useFactory`, in order. */
  inject?: FactoryProvider["inject"];
  /** Makes the options (may be async). */
  // biome-ignore lint/suspicious/noExplicitAny: the injected values are typed by the caller's parameters, as Nest's own FactoryProvider does
  useFactory: (...args: any[]) => TableKitModuleOptions | Promise<TableKitModuleOptions>;
}

/** The context the options describe. */
function createContext(options: TableKitModuleOptions): TableContext {
  if (options === null || typeof options !== "object") {
    throw new ValidationError(
      "nestjs-options",
      "TableKitModule needs options: { store } or { connectionString }",
    );
  }
  if (options.store !== undefined) return new TableContext(options);
  const { connectionString, azure, ...rest } = options as TableKitConnectionOptions;
  if (typeof connectionString !== "string" || connectionString === "") {
    throw new ValidationError(
      "nestjs-options",
      "TableKitModule needs { store } (e.g. new MemoryStore()) or { connectionString }",
      { field: "connectionString" },
    );
  }
  return new TableContext({ ...rest, store: AzureStore.fromConnectionString(connectionString, azure) });
}

const contextProvider: FactoryProvider<TableContext> = {
  provide: TABLE_CONTEXT,
  useFactory: createContext,
  inject: [TABLE_KIT_OPTIONS],
};

/**
 * The root module behind `forRoot`/`forRootAsync` (global): one `TableContext` for the application,
 * closed (its repair workers stopped) when the module is destroyed (`app.close()`). Not exported
 * from `tablekit/nestjs`.
 */
@Global()
@Module({})
export class TableKitCoreModule implements OnModuleDestroy {
  readonly #context: TableContext;

  // An explicit token: no `emitDecoratorMetadata` needed, by tablekit or by the application.
  constructor(@Inject(TABLE_CONTEXT) context: TableContext) {
    this.#context = context;
  }

  /** Nest's shutdown hook: closes the context (its repair workers stop). */
  async onModuleDestroy(): Promise<void> {
    await this.#context.close();
  }

  /** The root module over these options' providers. */
  static with(providers: Provider[], imports: ModuleMetadata["imports"] = []): DynamicModule {
    return {
      module: TableKitCoreModule,
      imports,
      providers: [...providers, contextProvider],
      exports: [TABLE_CONTEXT],
    };
  }
}

/**
 * tablekit in a NestJS application: `forRoot` (or `forRootAsync`) once in the root module for the
 * context, `forFeature([Entity, …])` in each module that injects repositories.
 * @example
 * @Module({ imports: [TableKitModule.forRoot({ connectionString: process.env.TABLES! }), TableKitModule.forFeature([Employee])] })
 * class AppModule {}
 */
@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest module is a class; its dynamic modules come from static methods
export class TableKitModule {
  /**
   * The application's `TableContext`, from its options (with a `store`) or from a connection string
   * (`{ connectionString, …options }`); `@InjectTableContext()` injects it anywhere.
   */
  static forRoot(options: TableKitModuleOptions): DynamicModule {
    return TableKitCoreModule.with([{ provide: TABLE_KIT_OPTIONS, useValue: options }]);
  }

  /**
   * `forRoot` with options made by a factory: `imports` are available to it and `inject` lists the
   * tokens passed to it.
   * @example
   * TableKitModule.forRootAsync({ imports: [ConfigModule], inject: [ConfigService], useFactory: (config: ConfigService) => ({ connectionString: config.get("TABLES") }) })
   */
  static forRootAsync(options: TableKitModuleAsyncOptions): DynamicModule {
    if (typeof options?.useFactory !== "function") {
      throw new ValidationError("nestjs-options", "TableKitModule.forRootAsync needs { useFactory }", {
        field: "useFactory",
      });
    }
    return TableKitCoreModule.with(
      [{ provide: TABLE_KIT_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] }],
      options.imports ?? [],
    );
  }

  /**
   * Provides the repository of each entity class under `getRepositoryToken(Entity)`, for
   * `@InjectRepository(Entity)` in this module's providers.
   */
  static forFeature(entities: readonly EntityClass[]): DynamicModule {
    if (!Array.isArray(entities)) {
      throw new ValidationError(
        "nestjs-options",
        "TableKitModule.forFeature takes an array of entity classes",
        {
          field: "entities",
        },
      );
    }
    const providers: FactoryProvider[] = entities.map((entity) => ({
      provide: getRepositoryToken(entity),
      useFactory: (context: TableContext) => context.repository(entity),
      inject: [TABLE_CONTEXT],
    }));
    return {
      module: TableKitModule,
      providers,
      exports: providers.map((provider) => provider.provide),
    };
  }
}
