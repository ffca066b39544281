import type { Config } from "../config.ts";
import type { DB } from "./database.ts";

/** The id of the store every platform has (the storefront's, and the API's when none is named). */
export const DEFAULT_STORE = "default";

/** The default store, named and priced from the platform's store and localization settings. */
export async function ensureDefaultStore(db: DB, config: Config): Promise<void> {
  const name = config.CONFIG_STORE?.name ?? config.PLATFORM_INSTANCE;
  const currency = config.CONFIG_LOCALIZATION?.currency ?? "USD";
  await db
    .insertInto("stores")
    .values({ id: DEFAULT_STORE, name, currency })
    .onConflict((oc) => oc.column("id").doUpdateSet({ name, currency }))
    .execute();
}
