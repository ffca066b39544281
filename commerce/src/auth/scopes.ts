// Scopes of API keys and OAuth clients. `<resource>:*` grants read and write of the resource; `*`
// (the operator's key) grants everything, including managing keys and clients.

export const SCOPES = [
  "products:read",
  "products:write",
  "orders:read",
  "orders:write",
  "customers:read",
  "customers:write",
  "inventory:read",
  "inventory:write",
  "analytics:read",
  "webhooks:read",
  "webhooks:write",
] as const;

/** What may be granted: a scope, a resource wildcard, or `*`. */
export const GRANTABLE = [
  ...SCOPES,
  "products:*",
  "orders:*",
  "customers:*",
  "inventory:*",
  "webhooks:*",
  "*",
] as const;
export type Grantable = (typeof GRANTABLE)[number];

/** Whether `granted` covers `needed` (e.g. `orders:*` covers `orders:write`). */
export function covers(granted: readonly string[], needed: string): boolean {
  const resource = needed.split(":")[0];
  return granted.some((g) => g === "*" || g === needed || g === `${resource}:*`);
}
