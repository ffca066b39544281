import { describe, expect, it } from "vitest";
import { parseSelector, selectorFromLabels } from "./selector.ts";

describe("label selectors", () => {
  const l = { app: "web", tier: "front", "cronscale.io/task": "t1" };
  it.each([
    ["", true],
    ["app=web", true],
    ["app==web", true],
    ["app=db", false],
    ["app!=db", true],
    ["missing!=x", true],
    ["tier", true],
    ["!tier", false],
    ["!missing", true],
    ["app in (web, db)", true],
    ["app notin (web)", false],
    ["missing notin (a)", true],
    ["app=web,tier=front,cronscale.io/task=t1", true],
    ["app=web,tier=back", false],
  ])("%s → %s", (sel, want) => {
    expect(parseSelector(sel)(l)).toBe(want);
  });

  it("rejects malformed terms", () => {
    expect(() => parseSelector("a b c")).toThrow();
  });

  it("formats label maps as stable equality selectors", () => {
    expect(selectorFromLabels({ b: "2", a: "1" })).toBe("a=1,b=2");
  });
});
