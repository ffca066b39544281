import { describe, expect, it } from "vitest";
import { verbOf } from "./proxy.ts";

describe("benchmark proxy", () => {
  const v = (method: string, url: string, ct?: string) => verbOf(method, new URL(url, "http://x"), ct);

  it("classifies requests as Kubernetes verbs on resources", () => {
    expect(v("GET", "/api/v1/namespaces/ns/configmaps?limit=500")).toEqual({
      verb: "list",
      resource: "configmaps",
    });
    expect(v("GET", "/api/v1/namespaces/ns/configmaps?watch=true")).toEqual({
      verb: "watch",
      resource: "configmaps",
    });
    expect(v("GET", "/api/v1/namespaces/ns/configmaps/a")).toEqual({ verb: "get", resource: "configmaps" });
    expect(v("GET", "/apis/batch/v1/cronjobs")).toEqual({ verb: "list", resource: "cronjobs" });
    expect(v("PATCH", "/apis/batch/v1/namespaces/ns/cronjobs/a", "application/apply-patch+yaml")).toEqual({
      verb: "apply",
      resource: "cronjobs",
    });
    expect(
      v(
        "PATCH",
        "/apis/cronscale.io/v1alpha1/namespaces/ns/scheduledtasks/a/status",
        "application/apply-patch+yaml",
      ),
    ).toEqual({ verb: "apply", resource: "scheduledtasks/status" });
    expect(v("POST", "/apis/events.k8s.io/v1/namespaces/ns/events").verb).toBe("create");
    expect(v("DELETE", "/api/v1/namespaces/ns/secrets/s").verb).toBe("delete");
  });
});
