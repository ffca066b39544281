import { body, productBody, type Service, startService } from "./harness.ts";

// The service the store's HTTP tests use: the store on the platform host (localhost), the API on
// the API host (127.0.0.1), German localization with included tax, two shipping methods, a Test
// gateway, and a catalogue of 28 products (ids by title).

export interface StoreFixture {
  svc: Service;
  /** The store's base URL (platform host). */
  base: string;
  ids: Record<string, string>;
}

export async function startStore(): Promise<StoreFixture> {
  const ids: Record<string, string> = {};
  const svc = await startService({
    PLATFORM_URL: "http://localhost",
    API_URL: "http://127.0.0.1",
    CONFIG_STORE: JSON.stringify({
      name: "Kaffee Haus",
      contactEmail: "hallo@kaffee.test",
      supportPhone: "+49 30 1234567",
      address: { line1: "Hauptstr. 1", city: "Berlin", postalCode: "10115", country: "DE" },
    }),
    CONFIG_LOCALIZATION: JSON.stringify({
      defaultLanguage: "de",
      currency: "EUR",
      timezone: "Europe/Berlin",
      dateFormat: "DD.MM.YYYY",
      tax: { pricesIncludeTax: true, defaultRatePercent: "19" },
    }),
    CONFIG_SHIPPING_METHODS: JSON.stringify([
      {
        name: "standard",
        carrier: "DHL",
        zones: ["DE", "AT"],
        rate: { calculation: "Flat", amount: "4.90" },
      },
      { name: "express", carrier: "UPS", zones: ["DE"], rate: { calculation: "Flat", amount: "12.00" } },
    ]),
    CONFIG_PAYMENT_GATEWAYS: JSON.stringify([{ name: "card", type: "Card", provider: "test", mode: "Test" }]),
  });
  const port = new URL(svc.url).port;
  const base = `http://localhost:${port}`;
  const mk = async (title: string, skus: string[], price: number, stock: number) => {
    const p = await body(
      await svc.call("/api/v1/products", { method: "POST", json: productBody(title, skus, price, stock) }),
    );
    ids[title] = p.id;
    return p;
  };
  await mk("Blue Mug", ["MUG-BLUE-S", "MUG-BLUE-L"], 1250, 3);
  await mk("Red Mug", ["MUG-RED"], 990, 0);
  await mk("Green Tea", ["TEA-GREEN"], 450, 100);
  for (let i = 0; i < 25; i++) await mk(`Zz Item ${String(i).padStart(2, "0")}`, [`ZZ-${i}`], 100, 10);
  return { svc, base, ids };
}
