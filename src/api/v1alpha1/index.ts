import type { KindDefinition } from "./kind.ts";

export * from "./kind.ts";

/**
 * Every kind of cronscale.io/v1alpha1, in the order the CRD generator writes them.
 * Kind owners add their `defineKind` export here (one import, one entry).
 */
export const allKinds: readonly KindDefinition[] = [];
