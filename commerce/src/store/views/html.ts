import htmModule from "htm";
import { h, type VNode } from "preact";
import { renderToString } from "preact-render-to-string";

// Components are plain functions returning Preact vnodes written with htm tagged templates: no
// JSX, so Node runs the TypeScript as-is and there is no client build step. Rendering to a string
// escapes every interpolated value; nothing here injects raw HTML.

// htm's typings describe a CommonJS default under nodenext; at run time the default import is
// htm itself (its ESM build).
const htm = htmModule as unknown as {
  bind(f: typeof h): (strings: TemplateStringsArray, ...values: unknown[]) => VNode;
};

/** Tagged template producing vnodes (`html\`<p>${text}</p>\``). */
export const html = htm.bind(h);

/** A whole page, with its doctype. */
export function renderPage(vnode: VNode): string {
  return `<!doctype html>${renderToString(vnode)}`;
}

export type { VNode };
