import { type RawBuilder, sql } from "kysely";
import { z } from "zod";
import { Problem } from "./problem.ts";

// Keyset (cursor) pagination: a page is "the rows after (sort value, id) of the last row seen", so
// rows inserted meanwhile never shift a page (no duplicates, no gaps, unlike OFFSET). The cursor
// carries the sort it was made for and the last row's values as PostgreSQL text (timestamps keep
// their microseconds).

export const pageQuery = <S extends string>(sorts: readonly [S, ...S[]]) =>
  z.object({
    limit: z.coerce.number().int().min(1).max(200).default(50).describe("Page size, 1-200."),
    cursor: z.string().max(512).optional().describe("nextCursor of the previous page."),
    sort: z
      .enum(sorts.flatMap((s) => [s, `-${s}`]) as [S | `-${S}`, ...(S | `-${S}`)[]])
      .default(`-${sorts[0]}` as never)
      .describe("Sort field; a leading - sorts descending."),
  });

export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    nextCursor: z.string().nullable().describe("Pass as cursor to get the next page; null on the last page."),
  });

interface Cursor {
  s: string;
  v: string | null;
  id: string;
}

/**
 * The WHERE and ORDER BY of a page. `column` is the sort column (`table.column`), `idColumn` the
 * unique tie-breaker; `pgType` the sort column's PostgreSQL type (to cast the cursor value back).
 */
export function keyset(column: string, idColumn: string, pgType: string, sort: string, cursor?: string) {
  const desc = sort.startsWith("-");
  const col = sql.ref(column);
  const id = sql.ref(idColumn);
  let where: RawBuilder<boolean> | undefined;
  if (cursor) {
    let c: Cursor;
    try {
      c = JSON.parse(Buffer.from(cursor, "base64url").toString()) as Cursor;
    } catch {
      throw badCursor("is not a cursor of this API");
    }
    if (c.s !== sort || typeof c.id !== "string") throw badCursor(`was made for sort=${c.s}, not ${sort}`);
    const v = sql`cast(${c.v} as ${sql.raw(pgType)})`;
    where = desc
      ? sql<boolean>`(${col}, ${id}) < (${v}, ${c.id})`
      : sql<boolean>`(${col}, ${id}) > (${v}, ${c.id})`;
  }
  const dir = desc ? sql`desc` : sql`asc`;
  return {
    where,
    orderBy: sql`${col} ${dir}, ${id} ${dir}`,
    /** Select this as `cursorValue` so the next cursor can be made from the last row. */
    cursorValue: sql<string | null>`${col}::text`,
  };
}

/** The page out of limit+1 rows: the extra row only says whether there is a next page. */
export function page<R extends { id: string; cursorValue: string | null }>(
  rows: R[],
  limit: number,
  sort: string,
): { rows: Omit<R, "cursorValue">[]; nextCursor: string | null } {
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  const last = shown[shown.length - 1];
  const nextCursor =
    more && last
      ? Buffer.from(JSON.stringify({ s: sort, v: last.cursorValue, id: last.id } satisfies Cursor)).toString(
          "base64url",
        )
      : null;
  return { rows: shown.map(({ cursorValue: _c, ...r }) => r), nextCursor };
}

const badCursor = (why: string) =>
  new Problem(422, "validation", "Invalid request", `query cursor: ${why}`, {
    errors: [{ pointer: "#/cursor", in: "query", detail: why }],
  });
