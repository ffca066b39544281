import { describe, expect, it } from "vitest";
import { ApiError } from "../runtime/errors.ts";
import { retryDelayMs, withRetryAfter } from "./retry-after.ts";

// The API server's answer while a resource's watch cache (re)initializes.
const initializing = () =>
  new ApiError(429, "TooManyRequests", "GET /apis/...: 429 storage is (re)initializing", {
    kind: "Status",
    status: "Failure",
    message: "storage is (re)initializing",
    reason: "TooManyRequests",
    details: { retryAfterSeconds: 1 },
    code: 429,
  });

describe("retrying what the API server did not process", () => {
  it("retries a 429 after the delay asked for, and returns the answer", async () => {
    const slept: number[] = [];
    let calls = 0;
    const out = await withRetryAfter(
      async () => {
        calls++;
        if (calls < 3) throw initializing();
        return "list";
      },
      { attempts: 5, maxDelayMs: 2000, sleep: async (ms) => void slept.push(ms) },
    );
    expect(out).toBe("list");
    expect(calls).toBe(3);
    expect(slept).toEqual([1000, 1000]);
  });

  it("gives up after the attempts allowed, with the API server's error", async () => {
    let calls = 0;
    const call = async () => {
      calls++;
      throw initializing();
    };
    await expect(
      withRetryAfter(call, { attempts: 3, maxDelayMs: 10, sleep: async () => {} }),
    ).rejects.toThrow("storage is (re)initializing");
    expect(calls).toBe(3);
  });

  it("does not retry refusals, validation errors, or a 503 without a delay", async () => {
    expect(retryDelayMs(new ApiError(403, "Forbidden", "forbidden"))).toBeUndefined();
    expect(retryDelayMs(new ApiError(422, "Invalid", "invalid"))).toBeUndefined();
    expect(retryDelayMs(new ApiError(503, "ServiceUnavailable", "down"))).toBeUndefined();
    expect(retryDelayMs(new Error("ECONNREFUSED"))).toBeUndefined();
    expect(
      retryDelayMs(new ApiError(503, "ServiceUnavailable", "x", { details: { retryAfterSeconds: 2 } })),
    ).toBe(2000);
    expect(retryDelayMs(new ApiError(429, "TooManyRequests", "x"))).toBe(1000);
    let calls = 0;
    await expect(
      withRetryAfter(async () => {
        calls++;
        throw new ApiError(403, "Forbidden", "forbidden");
      }),
    ).rejects.toThrow("forbidden");
    expect(calls).toBe(1);
  });
});
