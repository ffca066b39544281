import { describe, expect, it } from "vitest";
import { ASSET_PATHS, ASSETS } from "./assets.ts";

describe("dashboard assets", () => {
  it("the script is valid JavaScript and the paths carry the content hash", () => {
    const js = ASSETS[ASSET_PATHS.js]?.body ?? "";
    expect(() => new Function(js)).not.toThrow();
    expect(ASSET_PATHS.js).toMatch(/^\/dashboard\/assets\/app-[0-9a-f]{12}\.js$/);
    expect(ASSETS[ASSET_PATHS.css]?.body).toContain("prefers-color-scheme:dark");
  });
});
